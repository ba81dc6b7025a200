package updatedoc

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/upcheck/upcheck/internal/jsonpos"
)

// decodeOne decodes exactly one JSON value from body into v and refuses
// anything after it but white space: a document with trailing data was
// produced by a broken publisher or spliced together, and the signature
// would cover bytes nobody looked at. Errors say where the problem is, in
// lines and columns a publisher can find in their file (jsonpos).
func decodeOne(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return invalidf(err, "update document: %s", jsonpos.Describe(body, err, "the document"))
	}
	if line, col, ok := jsonpos.Trailing(body, dec.InputOffset()); ok {
		return invalidf(nil, "update document: unexpected data after the JSON value at line %d, column %d", line, col)
	}
	return nil
}

func checkFormat(raw json.RawMessage) error {
	text := string(raw)
	if text == "" || text == "null" {
		return invalidf(nil, "update document: format is missing")
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return invalidf(err, "update document: format %s is not an integer", text)
	}
	if n != Format {
		return invalidf(nil, "update document: unsupported format %d (this reader understands format %d)", n, Format)
	}
	return nil
}
