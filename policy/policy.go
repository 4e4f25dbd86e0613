// Package policy holds the person-set parameters of processing (F-D5.5) and
// the three decision points of the specification (F-D6): g decides direct or
// decompose, v accepts or rejects evidence, r picks what to do after a
// rejection. All three are pure functions of their arguments, so the Guard
// can recompute a recorded decision and refuse one that the policy would not
// have made.
package policy

import (
	"fmt"
	"time"

	"github.com/fractal-harness/fractal/contract"
)

// Mode is who rules at supervision time (F-D5.5).
type Mode string

// The two modes.
const (
	// Interactive exposes key rulings to the user: r defaults to ask_user,
	// and only low-risk retries are automatic.
	Interactive Mode = "interactive"
	// Autonomous lets the policy decide; the user is asked only past the
	// permission, budget or risk limits.
	Autonomous Mode = "autonomous"
)

// Permissions say which recoveries r may choose on its own.
type Permissions struct {
	Reassign bool `json:"reassign" yaml:"reassign"` // hand a rejected task to a fresh instance
	Replan   bool `json:"replan" yaml:"replan"`     // throw the plan away and decompose again
}

// Budget bounds resources for a whole run. Zero means "no limit" for Tokens.
type Budget struct {
	Tokens int64 `json:"tokens" yaml:"tokens"`
}

// Policy is ⟨granularity_threshold, max_depth, permissions, budget,
// risk_threshold, retry_count⟩ plus the mode and the pool size.
type Policy struct {
	// GranularityThreshold: a contract with more checks than this is
	// decomposed (if depth allows); otherwise it is built directly.
	GranularityThreshold int `json:"granularity_threshold" yaml:"granularity_threshold"`
	// MaxDepth is D_max (F-D7): the deepest instance has depth MaxDepth;
	// the root has depth 0.
	MaxDepth    int         `json:"max_depth" yaml:"max_depth"`
	Permissions Permissions `json:"permissions" yaml:"permissions"`
	Budget      Budget      `json:"budget" yaml:"budget"`
	// RiskThreshold in [0,1]: a rejection whose risk exceeds it always goes
	// to the user, in both modes.
	RiskThreshold float64 `json:"risk_threshold" yaml:"risk_threshold"`
	// RetryCount is how many times a rejected task is retried by the same
	// instance before r considers reassigning or replanning.
	RetryCount int `json:"retry_count" yaml:"retry_count"`
	// MaxReassigns and MaxReplans bound the other two recoveries so that
	// r always reaches ask_user in finite steps.
	MaxReassigns int  `json:"max_reassigns" yaml:"max_reassigns"`
	MaxReplans   int  `json:"max_replans" yaml:"max_replans"`
	Mode         Mode `json:"mode" yaml:"mode"`
	// Pool is how many model calls may be in flight at once in a run (F-D9
	// rule 5: siblings share one pool; 1 degrades to serial).
	Pool int `json:"pool" yaml:"pool"`
	// MaxTurns bounds one worker session's model turns; past it the
	// attempt fails (a safety net, not a work cap: relay sessions come later).
	MaxTurns int `json:"max_turns" yaml:"max_turns"`
	// ModelTimeout bounds one model call.
	ModelTimeout time.Duration `json:"model_timeout" yaml:"model_timeout"`
	// MaxConcurrent is how many children one instance may run at once,
	// and DailyLimit how many spawns of one agent kind a day, unless a
	// blueprint sets less (DC6).
	MaxConcurrent int `json:"max_concurrent" yaml:"max_concurrent"`
	DailyLimit    int `json:"daily_limit" yaml:"daily_limit"`
	// MaxSessions bounds the relay sessions of one attempt; SessionTokens
	// is a session's context budget, past which the host ends it as a
	// hand-off (DA-A1).
	MaxSessions   int `json:"max_sessions" yaml:"max_sessions"`
	SessionTokens int `json:"session_tokens" yaml:"session_tokens"`
	// AnswerWait is how long an autonomous run waits for an answer before
	// taking a question's default (DA-B4).
	AnswerWait time.Duration `json:"answer_wait" yaml:"answer_wait"`
	// WatchEvery runs the Watcher over a worker's stream every so many
	// worker turns; 0 turns it off (DA-A2).
	WatchEvery int `json:"watch_every" yaml:"watch_every"`
	// Watchdog thresholds (DA-A5): a trip is an event and a message to
	// Meta, never an automatic restart.
	NoProgress      time.Duration `json:"no_progress" yaml:"no_progress"`
	ToolLoop        int           `json:"tool_loop" yaml:"tool_loop"`
	ReviewerSession time.Duration `json:"reviewer_session" yaml:"reviewer_session"`
	MetaTurn        time.Duration `json:"meta_turn" yaml:"meta_turn"`
}

// Default returns the documented defaults (docs/policy.md).
func Default() Policy {
	return Policy{
		GranularityThreshold: 3,
		MaxDepth:             3,
		Permissions:          Permissions{Reassign: true, Replan: true},
		Budget:               Budget{Tokens: 5_000_000},
		RiskThreshold:        0.7,
		RetryCount:           2,
		MaxReassigns:         1,
		MaxReplans:           1,
		Mode:                 Autonomous,
		Pool:                 4,
		MaxTurns:             60,
		ModelTimeout:         60 * time.Minute,
		MaxConcurrent:        8,
		DailyLimit:           10_000,
		MaxSessions:          20,
		SessionTokens:        150_000,
		AnswerWait:           10 * time.Minute,
		WatchEvery:           8,
		NoProgress:           30 * time.Minute,
		ToolLoop:             5,
		ReviewerSession:      30 * time.Minute,
		MetaTurn:             60 * time.Minute,
	}
}

// Validate reports the first unusable parameter.
func (p Policy) Validate() error {
	switch {
	case p.GranularityThreshold < 1:
		return fmt.Errorf("policy: granularity_threshold must be at least 1, got %d", p.GranularityThreshold)
	case p.MaxDepth < 0 || p.MaxDepth > 16:
		return fmt.Errorf("policy: max_depth must be between 0 and 16, got %d", p.MaxDepth)
	case p.Budget.Tokens < 0:
		return fmt.Errorf("policy: budget.tokens must not be negative, got %d", p.Budget.Tokens)
	case p.RiskThreshold < 0 || p.RiskThreshold > 1:
		return fmt.Errorf("policy: risk_threshold must be between 0 and 1, got %g", p.RiskThreshold)
	case p.RetryCount < 0 || p.MaxReassigns < 0 || p.MaxReplans < 0:
		return fmt.Errorf("policy: retry_count, max_reassigns and max_replans must not be negative")
	case p.Mode != Interactive && p.Mode != Autonomous:
		return fmt.Errorf("policy: mode must be %q or %q, got %q", Interactive, Autonomous, p.Mode)
	case p.Pool < 1:
		return fmt.Errorf("policy: pool must be at least 1, got %d", p.Pool)
	case p.MaxTurns < 1:
		return fmt.Errorf("policy: max_turns must be at least 1, got %d", p.MaxTurns)
	case p.ModelTimeout <= 0:
		return fmt.Errorf("policy: model_timeout must be positive")
	case p.MaxConcurrent < 1 || p.DailyLimit < 1:
		return fmt.Errorf("policy: max_concurrent and daily_limit must be at least 1")
	}
	return nil
}

// Granularity is g(c)'s answer.
type Granularity string

// The two answers of g.
const (
	Direct    Granularity = "direct"
	Decompose Granularity = "decompose"
)

// G is g(c) (F-D6): decompose when the contract has more checks than the
// granularity threshold and one more level of delegation is allowed;
// otherwise build directly. depth is the depth of the instance holding c.
func G(c contract.Contract, depth int, p Policy) Granularity {
	if depth >= p.MaxDepth {
		return Direct
	}
	if len(c.Checks) > p.GranularityThreshold {
		return Decompose
	}
	return Direct
}

// Verdict is v(c,e)'s answer.
type Verdict string

// The two answers of v.
const (
	Accept Verdict = "accept"
	Reject Verdict = "reject"
)

// V is v(c,e) (F-D6): accept exactly when sat(c,e). Deterministic.
func V(c contract.Contract, e contract.Evidence) Verdict {
	if contract.Sat(c, e) {
		return Accept
	}
	return Reject
}

// Action is r(c,e,p)'s answer.
type Action string

// The four answers of r, in the specification's order of preference.
const (
	Retry    Action = "retry"
	Reassign Action = "reassign"
	Replan   Action = "replan"
	AskUser  Action = "ask_user"
)

// Tally is what r needs to know of a task's history. The host keeps it from
// the journal; nothing a model writes can change it.
type Tally struct {
	Retries   int `json:"retries"`   // retries since the task was last (re)assigned
	Reassigns int `json:"reassigns"` // reassignments of this task
	Replans   int `json:"replans"`   // replans of the parent's plan
	// TokensUsed is the run's token use so far, compared with the budget.
	TokensUsed int64 `json:"tokens_used"`
	// OverBudget: the last attempt was stopped because a budget could
	// not cover its next model call. Trying again cannot help.
	OverBudget bool `json:"over_budget,omitempty"`
}

// R is r(c,e,p) (F-D6) for a rejected task: retry while retries remain;
// else reassign if permitted; else replan if permitted; else ask_user. The
// user is asked at once when the risk exceeds the threshold or the budget is
// spent. In interactive mode only retries are automatic, and only below the
// risk threshold; everything else is the user's ruling.
func R(t Tally, risk float64, p Policy) Action {
	if risk > p.RiskThreshold {
		return AskUser
	}
	if t.OverBudget || p.Budget.Tokens > 0 && t.TokensUsed >= p.Budget.Tokens {
		return AskUser
	}
	if t.Retries < p.RetryCount {
		return Retry
	}
	if p.Mode == Interactive {
		return AskUser
	}
	if p.Permissions.Reassign && t.Reassigns < p.MaxReassigns {
		return Reassign
	}
	if p.Permissions.Replan && t.Replans < p.MaxReplans {
		return Replan
	}
	return AskUser
}
