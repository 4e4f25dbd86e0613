package scope

import "fmt"

// FieldError is a contract, request or blueprint that is malformed or
// contradicts itself, whatever the parent: a bad name or path, a negative
// budget, read_only together with write paths. Field is the dotted key
// ("scope.write", "budget.max_tokens"); Value is the offending list item
// when the problem is one item, so a blueprint error can point at its line.
type FieldError struct {
	Field string
	Value string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, value, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Value: value, Msg: fmt.Sprintf(format, args...)}
}

// WidenError is a child that would have more than its parent in one
// dimension (DC3). Field is the dotted key ("capabilities.allow" in a
// request, "capabilities.allowed" in a contract, "budget.max_tokens", …),
// Child the child's value (one list item, one number or flag), and Parent
// the parent's bound written out ("[list_dir read_file]", "400000", "none").
// Callers branch on it: the Guard refuses with E-WIDEN, a negotiation
// (DC4) escalates instead of approving.
type WidenError struct {
	Field  string
	Child  string
	Parent string
}

func (e *WidenError) Error() string {
	return fmt.Sprintf("%s widens the parent: the child has %s, the parent allows %s", e.Field, e.Child, e.Parent)
}

func widen(field, child, parent string) *WidenError {
	return &WidenError{Field: field, Child: child, Parent: parent}
}

// bound writes a parent's list for a WidenError.
func bound(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return fmt.Sprint(list)
}
