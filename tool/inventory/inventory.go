// Package inventory lists what input files really hold before anyone
// relies on them (DA-B2, silent input failures).
//
// An office file is a zip archive: the inventory lists its parts and what
// they hold that a reading of the cells or the text would miss (pictures,
// charts, embedded objects, text boxes, hidden sheets, formulas without a
// stored result). A PDF is examined page by page: which pages have text a
// program can extract, which hold only images (a scan), whether it is
// encrypted. A text file is checked for its encoding and, for CSV, for rows
// whose number of fields differs from the header.
//
// Spreadsheet semantics come from excelize, PDF structure from pdfcpu; zip
// archives are listed with archive/zip, and the small XML parts that say
// which sheet or slide holds which chart or picture (relationships, the
// workbook and presentation part lists, slide and document text) are read
// with encoding/xml.
//
// A file that cannot be read (a damaged zip, an encrypted or truncated PDF)
// is not an error of the inventory: its Item records a Problem in plain
// words and the other files are still inventoried. Inventory and Folder
// return an error only when the file or folder itself cannot be opened or
// the context ends.
//
// Markdown renders items as an inventory.md page with the warnings first;
// Tool is the "inventory" tool a model calls on a file or folder it may
// read, confined like the tools of package tool/fs.
package inventory

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// MaxInspectSize is the largest file the inventory opens to look inside.
// A bigger file is listed with its type and size and a Problem saying it
// was not examined: the readers used hold much of a file in memory.
const MaxInspectSize = 256 << 20

// opener is where files are read from: an os.Root (the tool, Folder) or
// the plain file system (Inventory on a path the caller chose).
type opener interface {
	Open(name string) (*os.File, error)
	OpenFile(name string, flag int, perm iofs.FileMode) (*os.File, error)
	Stat(name string) (iofs.FileInfo, error)
	Readlink(name string) (string, error)
}

// osDir opens names under a folder of the plain file system, following
// symlinks as the operating system does.
type osDir string

func (d osDir) join(name string) string { return filepath.Join(string(d), filepath.FromSlash(name)) }

func (d osDir) Open(name string) (*os.File, error) { return os.Open(d.join(name)) }
func (d osDir) OpenFile(name string, flag int, perm iofs.FileMode) (*os.File, error) {
	return os.OpenFile(d.join(name), flag, perm)
}
func (d osDir) Stat(name string) (iofs.FileInfo, error) { return os.Stat(d.join(name)) }
func (d osDir) Readlink(name string) (string, error)    { return os.Readlink(d.join(name)) }

// Inventory examines one file. The Item's Path is path as given, with "/"
// separators. A symlink is followed, since the caller named it. The error
// is for a path that cannot be opened or is not a regular file, or for the
// end of ctx; a file that opens but cannot be read as its type gives an
// Item with a Problem.
func Inventory(ctx context.Context, path string) (Item, error) {
	if err := ctx.Err(); err != nil {
		return Item{}, err
	}
	return inspectFile(ctx, osDir(filepath.Dir(path)), filepath.Base(path), filepath.ToSlash(path))
}

// Folder examines every regular file under dir, sorted by path. Paths in
// the items are relative to dir. Symlinks are listed as KindSymlink items
// and not followed; devices, sockets and pipes as KindSpecial; a subfolder
// that cannot be listed as a KindFolder item with a Problem. The error is
// for a dir that cannot be opened, or for the end of ctx, which is checked
// between files and inside long ones.
func Folder(ctx context.Context, dir string) ([]Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("inventory: open folder: %w", err)
	}
	defer root.Close()
	return folder(ctx, root, ".", "")
}

// folder walks name under o. prefix is prepended to the paths of the items
// ("" for paths relative to name).
func folder(ctx context.Context, o opener, name, prefix string) ([]Item, error) {
	var items []Item
	var walk func(dir string) error
	walk = func(dir string) error {
		entries, err := readDir(o, dir)
		if err != nil {
			if dir == name {
				return fmt.Errorf("inventory: list %s: %w", display(prefix, name, dir), err)
			}
			items = append(items, Item{
				Path:    display(prefix, name, dir),
				Kind:    KindFolder,
				Problem: "this folder could not be listed (" + plainIOError(err) + "); the files in it were not inventoried",
			})
			return nil
		}
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return err
			}
			child := path.Join(dir, e.Name())
			shown := display(prefix, name, child)
			switch t := e.Type(); {
			case t&iofs.ModeSymlink != 0:
				it := Item{Path: shown, Kind: KindSymlink}
				if target, err := o.Readlink(child); err == nil {
					it.Target = target
				}
				items = append(items, it)
			case t.IsDir():
				if err := walk(child); err != nil {
					return err
				}
			case t.IsRegular():
				it, err := inspectEntry(ctx, o, child, shown)
				if err != nil {
					return err
				}
				items = append(items, it)
			default:
				items = append(items, Item{Path: shown, Kind: KindSpecial})
			}
		}
		return nil
	}
	if err := walk(name); err != nil {
		return nil, err
	}
	sort.Slice(items, func(i, j int) bool { return items[i].Path < items[j].Path })
	return items, nil
}

// display is the path shown for child, a path under the walked folder
// name, with prefix in front.
func display(prefix, name, child string) string {
	rel := child
	if name != "." {
		rel = strings.TrimPrefix(strings.TrimPrefix(child, name), "/")
	}
	switch {
	case prefix == "":
		if rel == "" {
			return "."
		}
		return rel
	case rel == "" || rel == ".":
		return prefix
	}
	return prefix + "/" + rel
}

func readDir(o opener, dir string) ([]iofs.DirEntry, error) {
	d, err := o.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	return entries, nil
}

// inspectEntry examines a regular file met during a walk; a file that
// vanished or cannot be opened becomes an Item with a Problem.
func inspectEntry(ctx context.Context, o opener, name, shown string) (Item, error) {
	it, err := inspectFile(ctx, o, name, shown)
	if err == nil || ctx.Err() != nil {
		return it, err
	}
	var fe *fileError
	if errors.As(err, &fe) {
		return Item{Path: shown, Kind: KindBinary, Problem: "this file could not be opened (" + plainIOError(fe.err) + ")"}, nil
	}
	return it, err
}

// fileError is a file that could not be opened or is not a regular file.
type fileError struct {
	path string
	err  error
}

func (e *fileError) Error() string { return "inventory: " + e.path + ": " + e.err.Error() }
func (e *fileError) Unwrap() error { return e.err }

var errNotRegular = errors.New("not a regular file")

// inspectFile opens name under o and examines it. It stats before
// opening, and opens without blocking, so that a named pipe (even one
// swapped in between) cannot hang the inventory.
func inspectFile(ctx context.Context, o opener, name, shown string) (Item, error) {
	fi, err := o.Stat(name)
	if err != nil {
		return Item{}, &fileError{shown, err}
	}
	if fi.IsDir() {
		return Item{}, &fileError{shown, errors.New("is a folder: use Folder")}
	}
	if !fi.Mode().IsRegular() {
		return Item{}, &fileError{shown, errNotRegular}
	}
	f, err := o.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Item{}, &fileError{shown, err}
	}
	defer f.Close()
	fi, err = f.Stat()
	if err != nil {
		return Item{}, &fileError{shown, err}
	}
	if fi.IsDir() {
		return Item{}, &fileError{shown, errors.New("is a folder: use Folder")}
	}
	if !fi.Mode().IsRegular() {
		return Item{}, &fileError{shown, errNotRegular}
	}
	it := Item{Path: shown, Size: fi.Size()}
	if err := inspect(ctx, f, &it); err != nil {
		return Item{}, err
	}
	return it, nil
}

// inspect fills it from the open file f. Only the end of ctx is an error.
func inspect(ctx context.Context, f *os.File, it *Item) (retErr error) {
	if it.Size == 0 {
		it.Kind = KindEmpty
		return nil
	}
	head := make([]byte, sniffLen)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		it.Kind = KindBinary
		it.Problem = "this file could not be read (" + plainIOError(err) + ")"
		return nil
	}
	head = head[:n]
	s, imgFormat := detect(head)
	switch s {
	case sniffZip:
		it.Kind = KindZip
	case sniffPDF:
		it.Kind = KindPDF
	case sniffOLE:
		it.Kind = KindOLE
	case sniffImage:
		it.Kind = KindImage
	case sniffText:
		it.Kind = textKind(it.Path)
	default:
		it.Kind = KindBinary
	}
	if it.Size > MaxInspectSize && s != sniffImage {
		it.Problem = fmt.Sprintf("this file is larger than %s, the most the inventory opens; only its type and size are listed, nothing inside it was checked", humanSize(MaxInspectSize))
		checkExtension(it)
		return nil
	}
	err = nil
	defer func() {
		// excelize, pdfcpu and the zip and XML readers meet hostile input
		// here; a crash in one of them is this file's problem, not the
		// inventory's.
		if r := recover(); r != nil {
			appendProblem(it, fmt.Sprintf("the reader for this type of file failed on it (%v); what is listed may be incomplete", r))
			checkExtension(it)
			retErr = nil
		}
	}()
	switch s {
	case sniffZip:
		err = inspectZip(ctx, f, it)
	case sniffPDF:
		err = inspectPDF(ctx, f, it)
	case sniffOLE:
		inspectOLE(f, it)
	case sniffImage:
		inspectImage(f, it, imgFormat)
	case sniffText:
		err = inspectText(ctx, f, it)
	}
	if err != nil {
		return err
	}
	checkExtension(it)
	return nil
}

// checkExtension notes a file whose content is not what its name says: a
// reader chosen by the name would fail or, worse, read nonsense.
func checkExtension(it *Item) {
	kinds, label := expected(it.Path)
	if kinds == nil {
		return
	}
	for _, k := range kinds {
		if k == it.Kind {
			return
		}
	}
	it.Mismatch = fmt.Sprintf("its name says %s but its content is %s", label, article(kindLabel(it)))
}

func article(s string) string {
	if s == "" || strings.HasSuffix(s, "text") {
		return s
	}
	switch s[0] {
	case 'a', 'e', 'i', 'o', 'u', 'E':
		return "an " + s
	}
	return "a " + s
}

// plainIOError words a file system error for a person.
func plainIOError(err error) string {
	switch {
	case errors.Is(err, iofs.ErrPermission):
		return "permission denied"
	case errors.Is(err, iofs.ErrNotExist):
		return "it no longer exists"
	case errors.Is(err, errNotRegular):
		return "it is not a regular file"
	}
	var pe *iofs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// humanSize writes n bytes as "12 bytes", "3.4 KB", "5.6 MB".
func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		if n == 1 {
			return "1 byte"
		}
		return fmt.Sprintf("%d bytes", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "KMGTPE"[exp])
}
