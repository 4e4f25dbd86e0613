package discuss_test

import (
	"fmt"

	"github.com/fractal-harness/fractal/discuss"
)

func ExampleQuestionsMarkdown() {
	r := discuss.Round{N: 1, Questions: []discuss.Question{{
		ID:   "audience",
		Text: "Who will read the brief?",
		Options: []discuss.Option{
			{Label: "The board", Value: "The brief is for the board of directors.", Default: true},
			{Label: "The sales team", Value: "The brief is for the sales team."},
		},
		SilentFailure: "The brief would be pitched at the wrong level of detail, and nobody would notice until it is read.",
		Editable:      true,
	}}}
	fmt.Print(discuss.QuestionsMarkdown(r))
	// Output:
	// # Questions before we start (round 1)
	//
	// Each question has a suggested answer. Pick an option by its number, or write your own answer. If no answer comes, we go ahead with the suggested answers and say so in the final report.
	//
	// ## 1. Who will read the brief?
	//
	// 1. The board (suggested) — The brief is for the board of directors.
	// 2. The sales team — The brief is for the sales team.
	// 3. Something else: write your own answer
	//
	// If the suggested answer is wrong: The brief would be pitched at the wrong level of detail, and nobody would notice until it is read.
}
