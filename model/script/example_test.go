package script_test

import (
	"context"
	"fmt"

	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/model/script"
)

func Example() {
	s, err := script.Parse([]byte(`
version: 1
sessions:
  - role: worker
    match: market
    turns:
      - text: I will read the inputs first.
        tool_calls:
          - name: read_file
            args: {path: inputs/sales.csv}
      - text: Done.
`), "demo.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	req := model.Request{Role: model.Worker, Instance: "root/market", Intent: "market summary", Attempt: 1,
		Messages: []model.Message{{Role: "user", Text: "Start."}}}
	resp, _ := s.Generate(context.Background(), req)
	fmt.Println(resp.Text, resp.ToolCalls[0].ID, resp.ToolCalls[0].Name, string(resp.ToolCalls[0].Args), resp.StopReason)

	// The turn is the number of assistant messages already in the request.
	req.Messages = append(req.Messages,
		model.Message{Role: "assistant", Text: resp.Text, ToolCalls: resp.ToolCalls},
		model.Message{Role: "user", ToolResults: []model.ToolResult{{CallID: "call_0_0", Content: "region,total\n"}}})
	resp, _ = s.Generate(context.Background(), req)
	fmt.Println(resp.Text, resp.StopReason)
	// Output:
	// I will read the inputs first. call_0_0 read_file {"path":"inputs/sales.csv"} tool_use
	// Done. end_turn
}

func ExampleParse_error() {
	_, err := script.Parse([]byte("version: 1\nsessions:\n  - role: worker\n    turns:\n      - text: hi\n        tool: x\n"), "demo.yaml")
	fmt.Println(err)
	// Output:
	// demo.yaml:6:9: sessions[0].turns[0]: unknown key "tool" (known: text, tool_calls, usage, latency, stop_reason)
}
