package model

import (
	"encoding/json"
	"testing"
)

func TestTurnCountsAssistantMessages(t *testing.T) {
	r := Request{Messages: []Message{{Role: "user"}, {Role: "assistant"}, {Role: "user"}, {Role: "assistant"}, {Role: "user"}}}
	if r.Turn() != 2 {
		t.Fatalf("turn %d", r.Turn())
	}
}

// Malformed tool arguments are kept for the model to see, never passed on
// as if they were valid.
func TestSanitize(t *testing.T) {
	c := ToolCall{Name: "x", Args: json.RawMessage(`{"a": `)}
	c.Sanitize()
	if c.Invalid != `{"a": ` || string(c.Args) != "{}" {
		t.Fatalf("%+v", c)
	}
	ok := ToolCall{Args: json.RawMessage(`{"a":1}`)}
	ok.Sanitize()
	if ok.Invalid != "" || string(ok.Args) != `{"a":1}` {
		t.Fatalf("%+v", ok)
	}
	if _, err := json.Marshal(c); err != nil {
		t.Fatal(err)
	}
}

func TestRolesAndUsage(t *testing.T) {
	for _, r := range Roles {
		if !r.Valid() {
			t.Fatal(r)
		}
	}
	if Role("boss").Valid() {
		t.Fatal("unknown role valid")
	}
	u := Usage{1, 2, 3, 4}.Add(Usage{1, 1, 1, 1})
	if u.Total() != 14 {
		t.Fatal(u)
	}
}
