package discuss

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxLine bounds one typed answer; a longer line is cut there.
const maxLine = 64 << 10

// Ask puts question q to a person at a terminal and reads their answer
// from in: a number picks that option, an empty line takes the suggested
// default, and any other text is the person's own answer (text equal to
// an option's label picks that option). A number that is no option is
// asked again, since a typo should not silently become an answer. When
// the input ends without a usable answer, the default is taken, marked
// Defaulted with a note for the delivery report. Pressing Enter is a
// choice, not a default by silence: that answer is not Defaulted. q
// should pass ValidateQuestions.
//
// Ask reads in byte by byte and never past the end of the answer's line,
// so several Asks can share one reader (os.Stdin) without losing typed
// lines to a buffer. For the same reason it starts no goroutine: the
// context is checked before each prompt and after each line, and a read
// that blocks is not interrupted — a goroutine left blocked on the
// terminal would swallow the person's next line.
func Ask(ctx context.Context, in io.Reader, out io.Writer, q Question) (Answer, error) {
	def, defN := defaultOption(q)
	if defN == 0 {
		return Answer{}, fmt.Errorf("discuss: question %s has no default option", q.ID)
	}
	if err := ctx.Err(); err != nil {
		return Answer{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n", oneLine(q.Text))
	for i, o := range q.Options {
		mark := ""
		if o.Default {
			mark = "   (suggested)"
		}
		fmt.Fprintf(&b, "  %d) %s%s\n", i+1, oneLine(o.Label), mark)
	}
	fmt.Fprintf(&b, "If the suggested answer is wrong: %s\n", oneLine(q.SilentFailure))
	if _, err := io.WriteString(out, b.String()); err != nil {
		return Answer{}, fmt.Errorf("discuss: %w", err)
	}
	prompt := fmt.Sprintf("Type 1-%d, press Enter for %d, or write your own answer: ", len(q.Options), defN)
	for {
		if _, err := io.WriteString(out, prompt); err != nil {
			return Answer{}, fmt.Errorf("discuss: %w", err)
		}
		line, err := readLine(in)
		if cerr := ctx.Err(); cerr != nil {
			return Answer{}, cerr
		}
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return Answer{}, fmt.Errorf("discuss: reading the answer: %w", err)
		}
		text := strings.TrimSpace(line)
		switch {
		case text == "" && eof:
			return Answer{QuestionID: q.ID, Value: def.Value, Defaulted: true,
				Note: "no answer (the input ended); took the default: " + def.Label}, nil
		case text == "":
			return Answer{QuestionID: q.ID, Value: def.Value, Note: "accepted the suggested answer: " + def.Label}, nil
		}
		if n, perr := strconv.Atoi(text); perr == nil {
			if n >= 1 && n <= len(q.Options) {
				return Answer{QuestionID: q.ID, Value: q.Options[n-1].Value}, nil
			}
			if eof {
				return Answer{QuestionID: q.ID, Value: def.Value, Defaulted: true,
					Note: fmt.Sprintf("no usable answer (the input ended after %q, which is no option); took the default: %s", text, def.Label)}, nil
			}
			fmt.Fprintf(out, "There is no option %d. To answer with a number, write it with a word, such as \"%d pages\".\n", n, n)
			continue
		}
		for _, o := range q.Options {
			if strings.EqualFold(text, strings.TrimSpace(o.Label)) || strings.EqualFold(text, strings.TrimSpace(o.Value)) {
				return Answer{QuestionID: q.ID, Value: o.Value}, nil
			}
		}
		return Answer{QuestionID: q.ID, Value: text, Note: "own answer"}, nil
	}
}

// readLine reads up to and including the next newline, or to the end of
// the input, without reading further. It returns io.EOF with whatever was
// read when the input ends before a newline.
func readLine(r io.Reader) (string, error) {
	var line []byte
	var buf [1]byte
	for {
		n, err := r.Read(buf[:])
		if n == 1 {
			if buf[0] == '\n' {
				return string(line), nil
			}
			if len(line) < maxLine {
				line = append(line, buf[0])
			}
		}
		if err != nil {
			return string(line), err
		}
	}
}
