package fs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/fractal-harness/fractal/model"
	"github.com/fractal-harness/fractal/tool"
)

type readFile struct{}

// ReadFile returns the read_file tool: the text of a file inside the
// instance's boundary or a readable folder, by lines, capped at MaxOutput.
func ReadFile() tool.Tool { return readFile{} }

const readSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path relative to the run folder, e.g. \"inputs/sales.csv\" or \"work/root/notes.md\"."},
    "offset": {"type": "integer", "minimum": 1, "description": "Number of the first line to return, counting from 1. Default 1."},
    "limit": {"type": "integer", "minimum": 1, "description": "Most lines to return. Default: to the end of the file, within the 256 KiB cap."}
  },
  "required": ["path"],
  "additionalProperties": false
}`

func (readFile) Spec() model.ToolSpec {
	return model.ToolSpec{
		Name: "read_file",
		Description: "Read a text file. The path is relative to the run folder (for example \"inputs/sales.csv\" " +
			"or \"work/root/market/notes.md\"); you may read inside your own folder and the folders you were given to read. " +
			"Returns the file's text exactly, by whole lines. At most 256 KiB is returned per call: when the output is cut, " +
			"a note at the end in square brackets says which lines were shown and the offset to read on from. " +
			"Use offset (first line, counting from 1) and limit (number of lines) to read part of a large file. " +
			"Binary files are refused.",
		Schema: json.RawMessage(readSchema),
	}
}

type readArgs struct {
	Path   *string `json:"path"`
	Offset int     `json:"offset"`
	Limit  int     `json:"limit"`
}

func (readFile) Call(ctx context.Context, env tool.Env, raw json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	var a readArgs
	if err := decodeArgs(raw, &a); err != nil {
		return tool.Result{}, err
	}
	rel, err := pathArg(a.Path)
	if err != nil {
		return tool.Result{}, err
	}
	switch {
	case a.Offset < 0:
		return tool.Result{}, tool.Errorf(CodeArgs, "\"offset\" must be 1 or more (lines count from 1), not %d", a.Offset)
	case a.Limit < 0:
		return tool.Result{}, tool.Errorf(CodeArgs, "\"limit\" must be 1 or more, not %d", a.Limit)
	}
	start := max(a.Offset, 1) // 0 is what a model means by "from the start"

	pl, err := locate(env, rel, forRead)
	if err != nil {
		return tool.Result{}, err
	}
	defer pl.close()
	// Stat before opening: opening a FIFO for reading would block.
	fi, err := pl.root.Stat(pl.name)
	if err != nil {
		return tool.Result{}, ioError(rel, pl.base, CodeBoundaryRead, err)
	}
	switch {
	case fi.IsDir():
		return tool.Result{}, tool.Errorf(CodeIsDir, "%q is a folder: use list_dir", rel)
	case !fi.Mode().IsRegular():
		return tool.Result{}, tool.Errorf(CodeNotFile, "%q is not a regular file", rel)
	}
	f, err := pl.root.Open(pl.name)
	if err != nil {
		return tool.Result{}, ioError(rel, pl.base, CodeBoundaryRead, err)
	}
	defer f.Close()
	text, err := readLines(f, start, a.Limit)
	if err != nil {
		return tool.Result{}, fmt.Errorf("fs: read %s: %w", rel, err)
	}
	if !utf8.Valid(text.body) || bytes.IndexByte(text.body, 0) >= 0 {
		// NUL is valid UTF-8 but marks binary data (or UTF-16), which
		// would only be noise to a model.
		return tool.Result{}, tool.Errorf(CodeBinary, "%q is not UTF-8 text (a binary file?): read_file reads text only", rel)
	}
	out := string(text.body)
	if text.note != "" {
		if out != "" && out[len(out)-1] != '\n' {
			out += "\n"
		}
		out += text.note
	}
	return tool.Result{Content: out}, nil
}

// excerpt is what readLines found: the lines to show and a note on what
// was left out, if anything.
type excerpt struct {
	body []byte
	note string
}

// readLines returns the lines from start (1-based), at most limit of them
// (0: no limit), cut at whole lines before MaxOutput bytes.
func readLines(r io.Reader, start, limit int) (excerpt, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	skipped := 0
	for skipped < start-1 {
		eof, err := skipLine(br)
		if err != nil {
			return excerpt{}, err
		}
		if eof {
			break
		}
		skipped++
	}
	var (
		ex    excerpt
		shown int
	)
	for limit == 0 || shown < limit {
		line, whole, eof, err := readLine(br, MaxOutput-len(ex.body))
		if err != nil {
			return excerpt{}, err
		}
		if eof {
			if shown == 0 && start > 1 {
				ex.note = fmt.Sprintf("[the file has %d lines; offset %d is past its end]", skipped, start)
			}
			return ex, nil
		}
		if !whole {
			if shown == 0 {
				// One line bigger than the cap: its start is better than
				// nothing, and no offset can reach its rest.
				ex.body = append(ex.body, trimPartialRune(line)...)
				ex.note = fmt.Sprintf("[truncated: line %d is longer than the 256 KiB cap; only its start is shown. "+
					"The next line is offset=%d]", start, start+1)
			} else {
				ex.note = fmt.Sprintf("[truncated at the 256 KiB cap: showed lines %d-%d. "+
					"Read on with offset=%d (and a limit to take fewer lines at a time)]", start, start+shown-1, start+shown)
			}
			return ex, nil
		}
		ex.body = append(ex.body, line...)
		shown++
	}
	if _, err := br.Peek(1); err == nil {
		ex.note = fmt.Sprintf("[showed lines %d-%d; the file goes on: read on with offset=%d]", start, start+shown-1, start+shown)
	}
	return ex, nil
}

// skipLine reads past one line. eof is true when no line was left.
func skipLine(br *bufio.Reader) (eof bool, err error) {
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		switch {
		case err == nil:
			return false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			return n == 0, nil
		default:
			return false, err
		}
	}
}

// readLine reads one line with its newline. A line longer than max bytes
// comes back cut to max bytes with whole false, and the reader is left in
// the middle of it (the caller stops there). eof is true when no line was
// left.
func readLine(br *bufio.Reader, max int) (line []byte, whole, eof bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > max {
			return append(line, chunk[:max-len(line)]...), false, false, nil
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line, true, false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			return line, true, len(line) == 0, nil
		default:
			return nil, false, false, err
		}
	}
}

// trimPartialRune drops an incomplete UTF-8 sequence cut at the end of b,
// so a cut line is still valid text.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}
