package updatedoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
)

// decodeOne decodes exactly one JSON value from body into v and refuses
// anything after it but white space: a document with trailing data was
// produced by a broken publisher or spliced together, and the signature
// would cover bytes nobody looked at.
func decodeOne(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return jsonError(body, err)
	}
	end := dec.InputOffset()
	rest := bytes.TrimLeft(body[end:], " \t\r\n")
	if len(rest) > 0 {
		line, col := position(body, int64(len(body)-len(rest)))
		return invalidf(nil, "update document: unexpected data after the JSON value at line %d, column %d", line, col)
	}
	return nil
}

// jsonError turns the json package's errors into messages that say where
// the problem is in terms a publisher can find in their file: a line and
// column pointing at the bad character, or at the start of the value of the
// wrong type.
func jsonError(body []byte, err error) error {
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return invalidf(err, "update document: empty body")
	case errors.Is(err, io.ErrUnexpectedEOF):
		line, col := position(body, int64(len(body)))
		return invalidf(err, "update document: malformed JSON at line %d, column %d: unexpected end of input", line, col)
	case errors.As(err, &syntaxErr):
		// The offset is just past the offending byte.
		line, col := position(body, syntaxErr.Offset-1)
		return invalidf(err, "update document: malformed JSON at line %d, column %d: %v", line, col, err)
	case errors.As(err, &typeErr):
		line, col := position(body, valueStart(body, typeErr.Offset))
		field := typeErr.Field
		if field == "" {
			field = "the document"
		}
		return invalidf(err, "update document: %s at line %d, column %d must be %s, not a JSON %s",
			field, line, col, jsonKind(typeErr.Type), typeErr.Value)
	default:
		return invalidf(err, "update document: %v", err)
	}
}

// jsonKind names a Go type of the wire structs the way a JSON author would.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	default:
		return t.String()
	}
}

// valueStart finds where the JSON value of a type error begins. The json
// package reports the offset just past the opening bracket of an object or
// array, and just past the end of any other value.
func valueStart(body []byte, offset int64) int64 {
	end := min(max(offset, 0), int64(len(body)))
	if end == 0 {
		return 0
	}
	last := body[end-1]
	switch {
	case last == '{' || last == '[':
		return end - 1
	case last == '"':
		// Back to the opening quote: the first quote not escaped by an odd
		// number of backslashes.
		for i := end - 2; i >= 0; i-- {
			if body[i] != '"' {
				continue
			}
			slashes := 0
			for j := i - 1; j >= 0 && body[j] == '\\'; j-- {
				slashes++
			}
			if slashes%2 == 0 {
				return i
			}
		}
		return end - 1
	default:
		i := end
		for i > 0 && bytes.IndexByte([]byte("0123456789+-.eEtruefalsn"), body[i-1]) >= 0 {
			i--
		}
		return i
	}
}

// position converts a byte offset into a 1-based line and column.
func position(body []byte, offset int64) (line, col int) {
	if offset > int64(len(body)) {
		offset = int64(len(body))
	}
	if offset < 0 {
		offset = 0
	}
	before := body[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
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
