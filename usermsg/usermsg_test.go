package usermsg

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func question() Message {
	return Message{
		Kind: Question,
		Text: "The sales file has two sheets named “2025”. Which one should the summary use?",
		Options: []Option{
			{Label: "The first sheet (updated in March)", Value: "sheet 1", Default: true},
			{Label: "The second sheet (updated in June)", Value: "sheet 2"},
		},
		SilentFailure: "If the first sheet is outdated, every figure in the summary will be three months old, and nothing in the report will show it.",
	}
}

// DA-B4: well-formed messages of each kind pass.
func TestValidateGood(t *testing.T) {
	for _, m := range []Message{
		question(),
		{Kind: DeliveryReport, Text: "Your market brief is ready: output/brief.md. I assumed the first sheet was current."},
		{Kind: Notification, Text: "The PDF you sent has scanned pages; I am reading them as images, which takes longer."},
		// Words that contain a framework word, or look like one, are fine.
		{Kind: Notification, Text: "The meta-analysis and its metadata cover every stagecoach route; the instantly updated data staged well."},
	} {
		if err := Validate(m); err != nil {
			t.Errorf("%q: %v", m.Text, err)
		}
	}
}

// DA-B4, DA-A3: the structure of a question and of the other kinds.
func TestValidateStructure(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Message)
		want string
	}{
		{"unknown kind", func(m *Message) { m.Kind = "warning" }, `kind "warning"`},
		{"empty text", func(m *Message) { m.Text = "  " }, "text is empty"},
		{"one option", func(m *Message) { m.Options = m.Options[:1] }, "at least two options"},
		{"blank box", func(m *Message) { m.Options = nil }, "at least two options"},
		{"no default", func(m *Message) { m.Options[0].Default = false }, "exactly one default option, it has 0"},
		{"two defaults", func(m *Message) { m.Options[1].Default = true }, "it has 2"},
		{"empty value", func(m *Message) { m.Options[1].Value = "" }, "option 2 has no value"},
		{"empty label", func(m *Message) { m.Options[1].Label = "" }, "option 2 has no label"},
		{"same value twice", func(m *Message) { m.Options[1].Value = " sheet 1" }, "options 1 and 2 have the same value"},
		{"no silent failure", func(m *Message) { m.SilentFailure = "" }, "silent_failure"},
		{"report with options", func(m *Message) { m.Kind = DeliveryReport; m.SilentFailure = "" }, "a delivery_report has no options"},
		{"notification with silent failure", func(m *Message) { m.Kind = Notification; m.Options = nil }, "a notification has no silent_failure"},
	}
	for _, c := range cases {
		m := question()
		c.edit(&m)
		err := Validate(m)
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// DA-B4: framework words are refused wherever they appear — whole words,
// any case, plurals and possessives — and the error names each one and
// where it is.
func TestValidateJargon(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"The worker finished the first stage.", []string{"worker", "stage"}},
		{"Two WORKERS and three Instances are running.", []string{"worker", "instance"}},
		{"Meta's plan changed; the harnesses were updated.", []string{"meta", "harness"}},
		{"I called write_file and read_file, then declare_done.", []string{"write_file", "read_file", "declare_done"}},
		{"A sub-agent checked the evidence in the journal.", []string{"sub-agent", "evidence", "journal"}},
		{"The Guard refused it.", []string{"guard"}},
		{"See progress.md for details.", []string{"progress.md"}},
		// The legal sense is refused too, on purpose: Meta rephrases it.
		{"The supplier contract ends in May.", []string{"contract"}},
		{"Both contracts, and the contract's annex.", []string{"contract"}},
	}
	for _, c := range cases {
		err := Validate(Message{Kind: Notification, Text: c.text})
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: not refused: %v", c.text, err)
			continue
		}
		var got []string
		for _, w := range e.Words {
			got = append(got, w.Word)
			if w.Where != "text" {
				t.Errorf("%q: where = %q", c.text, w.Where)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: words %v, want %v", c.text, got, c.want)
		}
		if !strings.Contains(err.Error(), "rephrase") {
			t.Errorf("%q: error does not ask to rephrase: %v", c.text, err)
		}
	}
	m := question()
	m.Options[1].Label = "Ask the worker"
	m.Options[0].Value = "restart the instance"
	m.SilentFailure = "The contract would be wrong."
	err := Validate(m)
	for _, w := range []string{`"worker" in the option 2 label`, `"instance" in the option 1 value`, `"contract" in the silent failure`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
}

// Every documented word is refused, and docs/user-messages.md lists them
// all.
func TestJargonListDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/user-messages.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range Jargon() {
		if Validate(Message{Kind: Notification, Text: "About " + strings.ToUpper(w) + " today."}) == nil {
			t.Errorf("%q not refused", w)
		}
		if !strings.Contains(string(doc), "`"+w+"`") {
			t.Errorf("%q missing from docs/user-messages.md", w)
		}
	}
}

// DA-A3, DA-B4: autonomous mode takes the default and says so for the
// delivery report.
func TestTakeDefault(t *testing.T) {
	a := TakeDefault(question(), 10*time.Minute)
	if a.Value != "sheet 1" || !a.Defaulted || a.Note != "no answer after 10m; took the default: The first sheet (updated in March)" {
		t.Fatalf("%+v", a)
	}
	for d, want := range map[time.Duration]string{
		90 * time.Minute: "1h30m", 2 * time.Hour: "2h", 45 * time.Second: "45s", 0: "less than a second", 10*time.Minute + 20*time.Second: "10m",
	} {
		if got := TakeDefault(question(), d).Note; !strings.Contains(got, "after "+want+";") {
			t.Errorf("%s: %q", d, got)
		}
	}
	m := question()
	m.Options[0].Default = false
	a = TakeDefault(m, time.Hour)
	if a.Defaulted || a.Value != "" || !strings.Contains(a.Note, "no default") {
		t.Fatalf("invented an answer: %+v", a)
	}
	// The note itself is fit for the user.
	if err := Validate(Message{Kind: DeliveryReport, Text: TakeDefault(question(), time.Hour).Note}); err != nil {
		t.Fatal(err)
	}
}
