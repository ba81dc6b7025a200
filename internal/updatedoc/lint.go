package updatedoc

import (
	"encoding/json"

	"github.com/upcheck/upcheck/internal/jsonpos"
)

// Problem is one reason a document is refused, as [Parse] words it.
type Problem struct {
	// Path is the JSON path of the value or member at fault, as in
	// packages.blog.releases[2].version (a package code that is not a
	// plain name is quoted: packages["my blog"]); "" is the document as a
	// whole. A member that is missing has the path it should have.
	Path string `json:"path"`
	// Line and Column (1-based, columns in characters) are where the
	// problem is in the text: the value at Path, the member name of a
	// duplicate or misspelled member, or, for a missing member, the object
	// that lacks it. Both are 0 when there is no place (an empty body).
	Line   int `json:"line"`
	Column int `json:"column"`
	// Message is exactly the text of the error Parse returns for it.
	Message string `json:"message"`

	err error
}

// Lint returns every problem of a document, in the order the checker
// finds them, so that the first is the error [Parse] returns; nil means
// Parse accepts the document. There is one set of rules: Parse is Lint
// stopped at the first problem.
//
// Some problems hide others, and then the list stops there: JSON that does
// not parse (or has data after the value), a value of the wrong JSON type
// (the first one only), a format other than 1, and duplicate members
// (whichever of two members a reader keeps, the rest of the document means
// something else to another reader).
func Lint(body []byte) []Problem {
	_, problems := check(body)
	return problems
}

// Parse decodes and validates an update document. Unknown fields are
// ignored so that publishers can add to format 1 without breaking older
// readers; everything this package relies on is checked, and the first
// problem [Lint] finds is returned as an error wrapping [ErrInvalid] whose
// message names the field (packages are checked in code order, so the same
// document always gives the same error).
func Parse(body []byte) (*Document, error) {
	doc, problems := check(body)
	if len(problems) > 0 {
		return nil, problems[0].err
	}
	return doc, nil
}

// checker collects the problems of one document and knows where each
// value of it starts.
type checker struct {
	body     []byte
	at       map[string]int64 // JSON path -> offset of its value (filled by the member walk); nil: no places
	problems []Problem
}

// check runs the checker. Places cost a map entry for every value of the
// document, so they are found only for a document with problems, by a
// second run: a valid document is read once, and a refused one (rare)
// twice.
func check(body []byte) (*Document, []Problem) {
	doc, problems := checkOnce(body, nil)
	if problems == nil {
		return doc, nil
	}
	return checkOnce(body, make(map[string]int64))
}

// checkOnce runs the checker once; with at nil it finds no places.
func checkOnce(body []byte, at map[string]int64) (*Document, []Problem) {
	c := &checker{body: body, at: at}
	// The format is read first and alone: a document of another format may
	// have any shape, and "unsupported format 2" is the useful answer, not a
	// type error somewhere inside it.
	var probe struct {
		Format json.RawMessage `json:"format"`
	}
	if !c.decodeOne(&probe) {
		return nil, c.problems
	}
	// Member names are checked before the format is believed: with two
	// "format" members (or "format" and "Format") the probe holds whichever
	// the decoder kept. Only now, with the nesting depth bounded by the
	// probe's decoding, is the recursive walk safe.
	duplicates, misspelled, ok := c.checkMembers()
	if !ok {
		return nil, c.problems
	}
	c.problems = append(c.problems, duplicates...)
	if !c.checkFormat(probe.Format) {
		return nil, c.problems
	}
	c.problems = append(c.problems, misspelled...)
	if len(duplicates) > 0 {
		return nil, c.problems
	}

	var w wireDocument
	if !c.decodeOne(&w) {
		return nil, c.problems
	}
	doc := w.validate(c)
	if len(c.problems) > 0 {
		return nil, c.problems
	}
	return doc, nil
}

// add records a problem with the value at path, or when there is no such
// value (a missing member), with the object at parent.
func (c *checker) add(path, parent string, cause error, format string, args ...any) {
	offset, ok := c.at[path]
	if !ok {
		offset, ok = c.at[parent]
	}
	c.addAt(path, offset, ok, invalidf(cause, format, args...))
}

// addAt records err as a problem at path, placed at offset when known.
func (c *checker) addAt(path string, offset int64, known bool, err error) {
	p := Problem{Path: path, Message: err.Error(), err: err}
	if known {
		p.Line, p.Column = jsonpos.Position(c.body, offset)
	}
	c.problems = append(c.problems, p)
}

// pathAt is the path of the value starting at offset, "" when none does.
func (c *checker) pathAt(offset int64) string {
	for path, o := range c.at {
		if o == offset {
			return path
		}
	}
	return ""
}
