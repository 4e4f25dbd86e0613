package inventory

import (
	"context"
	"crypto/sha256"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/xuri/excelize/v2"
)

// MaxFormulaCells is how many cell positions of a workbook the inventory
// asks excelize about formulas. Past it, formula counts are lower bounds
// (Spreadsheet.FormulasChecked is false); everything else is still counted.
const MaxFormulaCells = 2_000_000

// maxUnzip caps what excelize may decompress from one workbook, a guard
// against a zip bomb.
const maxUnzip = 4 * MaxInspectSize

// wbSheet is a sheet as the workbook part lists it.
type wbSheet struct {
	name, state, part string
}

// inspectXLSX examines an Excel workbook. Sheets, cells, formulas, merged
// cells, comments, pictures and defined names come from excelize; which
// sheet holds which chart, object or text box comes from the package's
// relationships.
func inspectXLSX(ctx context.Context, f *os.File, p *pkg, main string, it *Item) error {
	dir := path.Dir(main) + "/"
	ss := &Spreadsheet{
		Media:           p.under(dir + "media/"),
		ExternalLinks:   namesUnder(p, dir+"externalLinks/", "externalLink"),
		Linked:          p.linked(),
		Macros:          p.has(dir + "vbaProject.bin"),
		FormulasChecked: true,
	}
	it.Spreadsheet = ss

	listed, listErr := workbookSheets(ctx, p, main)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	byName := map[string]wbSheet{}
	for _, s := range listed {
		byName[s.name] = s
	}

	// What the relationships attribute to each sheet, whatever excelize
	// makes of the cells.
	usedCharts, usedObjects := map[string]bool{}, map[string]bool{}
	graphics := func(sh *Sheet) {
		g, err := sheetGraphics(ctx, p, sh.Part)
		if err != nil && ctx.Err() == nil {
			sh.Problem = joinProblem(sh.Problem, "its drawings could not be read ("+err.Error()+")")
		}
		sh.Charts, sh.Objects, sh.TextBoxes = g.charts, g.objects, g.textBoxes
		for _, c := range g.charts {
			usedCharts[c] = true
		}
		for _, o := range g.objects {
			usedObjects[o] = true
		}
	}
	orphans := func() {
		for _, c := range namesUnder(p, dir+"charts/", "chart") {
			if !usedCharts[c] {
				ss.Charts = append(ss.Charts, c)
			}
		}
		for _, o := range partNames(p.under(dir + "embeddings/")) {
			if !usedObjects[o] {
				ss.Objects = append(ss.Objects, o)
			}
		}
	}

	xf, err := excelize.OpenReader(io.NewSectionReader(f, 0, it.Size), excelize.Options{UnzipSizeLimit: maxUnzip})
	if err != nil {
		// The cells are out of reach; the package still says what sheets
		// there are and what they carry.
		for _, s := range listed {
			sh := Sheet{Name: s.name, State: s.state, Part: s.part, Chartsheet: isChartsheet(s.part)}
			graphics(&sh)
			ss.Sheets = append(ss.Sheets, sh)
		}
		orphans()
		return fmt.Errorf("the spreadsheet reader could not open this workbook (%v); its cells were not read", err)
	}
	defer xf.Close()

	media := mediaIndex(p, ss.Media)
	budget := MaxFormulaCells
	for _, name := range xf.GetSheetList() {
		if err := ctx.Err(); err != nil {
			return err
		}
		s, ok := byName[name]
		sh := Sheet{Name: name, State: s.state, Part: s.part, Chartsheet: isChartsheet(s.part)}
		if !ok || sh.State == "" {
			sh.State = "visible"
			if v, err := xf.GetSheetVisible(name); err == nil && !v {
				sh.State = "hidden"
			}
		}
		if sh.Part != "" {
			graphics(&sh)
		}
		if !sh.Chartsheet {
			if err := sheetCells(ctx, xf, &sh, &budget); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				sh.Problem = joinProblem(sh.Problem, "its cells could not be read to the end ("+err.Error()+")")
			}
			sheetPictures(xf, &sh, media)
			if cs, err := xf.GetComments(name); err == nil {
				sh.Comments = len(cs)
			}
		}
		ss.Sheets = append(ss.Sheets, sh)
	}
	if budget <= 0 {
		ss.FormulasChecked = false
	}
	orphans()
	for _, dn := range xf.GetDefinedName() {
		ss.DefinedNames = append(ss.DefinedNames, DefinedName{Name: dn.Name, RefersTo: dn.RefersTo, Scope: dn.Scope})
	}
	if listErr != nil {
		return fmt.Errorf("the list of sheets could not be read from the package (%v); sheet states and drawings may be missing", listErr)
	}
	return nil
}

func isChartsheet(part string) bool { return strings.Contains(part, "/chartsheets/") }

func joinProblem(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// workbookSheets reads the sheet list of the workbook part: name, state
// (visible, hidden, veryHidden) and the part that holds each sheet.
func workbookSheets(ctx context.Context, p *pkg, main string) ([]wbSheet, error) {
	rs, err := p.rels(main)
	if err != nil {
		return nil, err
	}
	targets := map[string]string{}
	for _, r := range rs {
		if !r.External {
			targets[r.ID] = r.Target
		}
	}
	rc, _, err := p.open(main)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var out []wbSheet
	err = walkXML(ctx, rc, func(tok xml.Token) error {
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "sheet" {
			return nil
		}
		s := wbSheet{state: "visible"}
		for _, a := range se.Attr {
			switch {
			case a.Name.Local == "name" && a.Name.Space == "":
				s.name = a.Value
			case a.Name.Local == "state" && a.Name.Space == "":
				s.state = a.Value
			case a.Name.Local == "id" && strings.Contains(a.Name.Space, "relationships"):
				s.part = targets[a.Value]
			}
		}
		out = append(out, s)
		return nil
	})
	return out, err
}

// graphicsOf is what a sheet's drawing holds besides pictures.
type graphicsOf struct {
	charts, objects []string
	textBoxes       int
}

// sheetGraphics follows a sheet's relationships to its drawing and from
// there to its charts, and counts the drawing's shapes that hold text.
// Embedded objects hang off the sheet itself.
func sheetGraphics(ctx context.Context, p *pkg, part string) (graphicsOf, error) {
	var g graphicsOf
	rs, err := p.rels(part)
	if err != nil {
		return g, err
	}
	for _, r := range rs {
		if r.External {
			continue
		}
		switch {
		case relIs(r, "oleObject"), relIs(r, "package"):
			g.objects = append(g.objects, r.Target)
		case relIs(r, "drawing"):
			drs, err := p.rels(r.Target)
			if err != nil {
				return g, err
			}
			for _, dr := range drs {
				if !dr.External && (relIs(dr, "chart") || relIs(dr, "chartEx")) {
					g.charts = append(g.charts, dr.Target)
				}
			}
			n, err := textBoxes(ctx, p, r.Target)
			if err != nil {
				return g, err
			}
			g.textBoxes += n
		}
	}
	sort.Strings(g.charts)
	sort.Strings(g.objects)
	return g, nil
}

// textBoxes counts the shapes of a drawing part that hold visible text.
func textBoxes(ctx context.Context, p *pkg, drawing string) (int, error) {
	if !p.has(drawing) {
		return 0, nil
	}
	rc, _, err := p.open(drawing)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	var (
		n, inSp, inText, chars int
	)
	err = walkXML(ctx, rc, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case t.Name.Local == "sp" && strings.Contains(t.Name.Space, "spreadsheetDrawing"):
				if inSp == 0 {
					chars = 0
				}
				inSp++
			case t.Name.Local == "t" && inNS(t.Name, nsDrawing...):
				inText++
			}
		case xml.EndElement:
			switch {
			case t.Name.Local == "sp" && strings.Contains(t.Name.Space, "spreadsheetDrawing"):
				inSp--
				if inSp == 0 && chars > 0 {
					n++
				}
			case t.Name.Local == "t" && inNS(t.Name, nsDrawing...):
				inText--
			}
		case xml.CharData:
			if inSp > 0 && inText > 0 {
				chars += visible(string(t))
			}
		}
		return nil
	})
	return n, err
}

// mergedIndex answers "is this cell covered by a merged range without
// being its top-left cell?": excelize reports such a cell's formula as the
// top-left cell's, which would count one formula many times.
type mergedIndex map[int][][2]int // row -> column spans (inclusive) covered but not top-left

func newMergedIndex(ranges []excelize.MergeCell) mergedIndex {
	m := mergedIndex{}
	for _, mc := range ranges {
		c1, r1, err1 := excelize.CellNameToCoordinates(mc.GetStartAxis())
		c2, r2, err2 := excelize.CellNameToCoordinates(mc.GetEndAxis())
		if err1 != nil || err2 != nil {
			continue
		}
		for r := r1; r <= r2; r++ {
			from := c1
			if r == r1 {
				from = c1 + 1
			}
			if from <= c2 {
				m[r] = append(m[r], [2]int{from, c2})
			}
		}
	}
	return m
}

func (m mergedIndex) covered(col, row int) bool {
	for _, span := range m[row] {
		if col >= span[0] && col <= span[1] {
			return true
		}
	}
	return false
}

// sheetCells streams a worksheet's rows: non-empty cells, used range,
// formulas (while budget lasts), merged cells and the recorded dimension.
func sheetCells(ctx context.Context, xf *excelize.File, sh *Sheet, budget *int) error {
	if d, err := xf.GetSheetDimension(sh.Name); err == nil {
		sh.Dimension = d
	}
	merged, err := xf.GetMergeCells(sh.Name, true)
	if err != nil {
		return err
	}
	sh.MergedCells = len(merged)
	covered := newMergedIndex(merged)

	rows, err := xf.Rows(sh.Name)
	if err != nil {
		return err
	}
	defer rows.Close()
	minRow, minCol, maxRow, maxCol := 0, 0, 0, 0
	for row := 1; rows.Next(); row++ {
		if row%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		used := false
		for i, v := range cols {
			col := i + 1
			content := v != ""
			if *budget > 0 && !covered.covered(col, row) {
				*budget--
				cell, _ := excelize.CoordinatesToCellName(col, row)
				if fm, err := xf.GetCellFormula(sh.Name, cell); err == nil && fm != "" {
					sh.Formulas++
					content = true
					if v == "" {
						sh.FormulasNoValue++
					}
				}
			}
			if !content {
				continue
			}
			sh.Cells++
			used = true
			if minCol == 0 || col < minCol {
				minCol = col
			}
			maxCol = max(maxCol, col)
		}
		if used {
			sh.Rows++
			if minRow == 0 {
				minRow = row
			}
			maxRow = row
		}
	}
	if err := rows.Error(); err != nil {
		return err
	}
	sh.Columns = maxCol
	if sh.Cells > 0 {
		a, _ := excelize.CoordinatesToCellName(minCol, minRow)
		b, _ := excelize.CoordinatesToCellName(maxCol, maxRow)
		sh.UsedRange = a + ":" + b
	}
	return nil
}

// mediaIndex maps the content of each media part to its name, so that a
// picture excelize returns (by content) can be named by its part.
func mediaIndex(p *pkg, media []Part) map[[32]byte]string {
	m := map[[32]byte]string{}
	for _, pt := range media {
		b, err := p.readAll(pt.Name)
		if err != nil {
			continue
		}
		m[sha256.Sum256(b)] = pt.Name
	}
	return m
}

// sheetPictures lists the pictures excelize finds on a sheet, floating
// over cells or placed in them.
func sheetPictures(xf *excelize.File, sh *Sheet, media map[[32]byte]string) {
	cells, err := xf.GetPictureCells(sh.Name)
	if err != nil {
		sh.Problem = joinProblem(sh.Problem, "its pictures could not be listed ("+err.Error()+")")
		return
	}
	seen := map[string]bool{}
	for _, cell := range cells {
		if seen[cell] {
			continue
		}
		seen[cell] = true
		pics, err := xf.GetPictures(sh.Name, cell)
		if err != nil {
			sh.Problem = joinProblem(sh.Problem, fmt.Sprintf("the picture at %s could not be read (%v)", cell, err))
			continue
		}
		for _, pic := range pics {
			pc := Picture{
				Cell:   cell,
				Format: pic.Extension,
				Bytes:  len(pic.File),
				Part:   media[sha256.Sum256(pic.File)],
				InCell: pic.InsertType != excelize.PictureInsertTypePlaceOverCells,
			}
			if pic.Format != nil {
				pc.Name, pc.AltText = pic.Format.Name, pic.Format.AltText
			}
			pc.Width, pc.Height = imageSize(pic.File)
			sh.Pictures = append(sh.Pictures, pc)
		}
	}
}
