// Command fractal runs long, unattended agent work as a tree of contracts.
//
//	fractal demo                         run the bundled demo
//	fractal run TASK [--model script:F]  start a run from a task file
//	fractal resume RUN                   continue a stopped, paused or crashed run
//	fractal pause RUN / cancel RUN       the user's say over a run
//	fractal status RUN [--json]          the instance tree and each node's state
//	fractal verify RUN                   replay the journal through the Guard
//	fractal check CONTRACT --in DIR      evaluate a contract's checks on a folder
//	fractal models                       each role's models and prices
//	fractal doctor                       check that every configured model answers
//	fractal blueprint check FILE         check an agent blueprint
//	fractal gc [RUNS] [--ttl 720h]       archive and remove finished runs
//	fractal bench                        measure the journal and the engine
//
// Exit codes: 0 success; 1 the work did not succeed (a failed check, a
// violation, a run that needs the user); 2 bad input; 3 an internal fault.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// exitError carries an exit code and a one-line message.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// usageErr is bad input: exit 2.
func usageErr(format string, a ...any) error {
	return &exitError{code: 2, msg: fmt.Sprintf(format, a...)}
}

// failErr is work that did not succeed: exit 1.
func failErr(format string, a ...any) error {
	return &exitError{code: 1, msg: fmt.Sprintf(format, a...)}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the CLI and returns the exit code. A panic becomes one line
// and exit 3: a person never sees a Go stack trace (it goes to a file when
// FRACTAL_TRACEBACK names one).
func run(args []string, stdout, stderr io.Writer) (code int) {
	return runIn(args, os.Stdin, stdout, stderr)
}

// runIn is run with a given standard input.
func runIn(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			if p := os.Getenv("FRACTAL_TRACEBACK"); p != "" {
				_ = os.WriteFile(p, debug.Stack(), 0o644)
			}
			fmt.Fprintf(stderr, "fractal: internal error: %v (please report it)\n", r)
			code = 3
		}
	}()
	root := newRoot(stdout, stderr)
	root.SetIn(stdin)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		fmt.Fprintf(stderr, "fractal: %s\n", oneLine(ee.msg))
		return ee.code
	}
	// Anything cobra reports itself (unknown command or flag, wrong number
	// of arguments) is bad input.
	fmt.Fprintf(stderr, "fractal: %s\n", oneLine(err.Error()))
	return 2
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.ReplaceAll(s, "\n", " ")
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "fractal",
		Short:         "Run long, unattended agent work as a tree of contracts",
		SilenceUsage:  true,
		SilenceErrors: true,
		CompletionOptions: cobra.CompletionOptions{
			DisableDefaultCmd: true,
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v (see 'fractal %s --help')", err, c.Name())
	})
	root.AddCommand(demoCmd(), runCmd(), resumeCmd(), statusCmd(), verifyCmd(), checkCmd(), modelsCmd(), doctorCmd(),
		controlCmd("pause", "Pause a run: no new model calls until it is resumed (the run's process keeps it)"),
		controlCmd("cancel", "Call a run off; everything done so far stays in its folder"), blueprintCmd(), gcCmd(), benchCmd())
	return root
}

// exactArgs is cobra.ExactArgs with a message that names the arguments.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr("%s needs %s (see 'fractal %s --help')", c.Name(), names, c.Name())
		}
		return nil
	}
}
