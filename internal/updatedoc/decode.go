package updatedoc

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/upcheck/upcheck/internal/jsonpos"
)

// decodeOne decodes exactly one JSON value from the body into v and
// refuses anything after it but white space: a document with trailing data
// was produced by a broken publisher or spliced together, and the
// signature would cover bytes nobody looked at. Problems say where they
// are, in lines and columns a publisher can find in their file (jsonpos).
// It reports whether the body decoded; a decoder stops at its first
// problem, so there is at most one.
func (c *checker) decodeOne(v any) bool {
	dec := json.NewDecoder(bytes.NewReader(c.body))
	if err := dec.Decode(v); err != nil {
		offset, known := jsonpos.Offset(c.body, err)
		path := ""
		if known {
			path = c.pathAt(offset)
		}
		c.addAt(path, offset, known, invalidf(err, "update document: %s", jsonpos.Describe(c.body, err, "the document")))
		return false
	}
	if line, col, ok := jsonpos.Trailing(c.body, dec.InputOffset()); ok {
		c.addAt("", int64(len(c.body))-int64(len(bytes.TrimLeft(c.body[dec.InputOffset():], " \t\r\n"))), true,
			invalidf(nil, "update document: unexpected data after the JSON value at line %d, column %d", line, col))
		return false
	}
	return true
}

// checkFormat reports whether the format is 1.
func (c *checker) checkFormat(raw json.RawMessage) bool {
	text := string(raw)
	if text == "" || text == "null" {
		c.add("format", "", nil, "update document: format is missing")
		return false
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		c.add("format", "", err, "update document: format %s is not an integer", text)
		return false
	}
	if n != Format {
		c.add("format", "", nil, "update document: unsupported format %d (this reader understands format %d)", n, Format)
		return false
	}
	return true
}
