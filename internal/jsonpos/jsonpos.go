// Package jsonpos says where in a JSON text encoding/json found a problem,
// as a line and a column a person can find in their editor. The update
// document and the components manifest both word their decode errors with
// it, so a publisher and an operator read the same kind of message.
package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Position converts a byte offset into body to a 1-based line and column.
// The column counts characters, not bytes, as editors do; an offset out of
// range is clamped to the text.
func Position(body []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(body)))
	before := body[:offset]
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return bytes.Count(before, []byte("\n")) + 1, utf8.RuneCount(before[lineStart:]) + 1
}

// Trailing reports where something other than white space starts in body
// after end (a json.Decoder's InputOffset after its one value); ok is false
// when there is nothing there.
func Trailing(body []byte, end int64) (line, col int, ok bool) {
	end = min(max(end, 0), int64(len(body)))
	rest := bytes.TrimLeft(body[end:], " \t\r\n")
	if len(rest) == 0 {
		return 0, 0, false
	}
	line, col = Position(body, int64(len(body)-len(rest)))
	return line, col, true
}

// Describe words err, returned by encoding/json while decoding body, with
// where it is: "malformed JSON at line 3, column 14: …" for a syntax error
// (pointing at the bad character), "publisher at line 1, column 28 must be
// a string, not a JSON number" for a value of the wrong type (pointing at
// the start of the value), "unexpected end of input" where a text cut
// short ends, and "empty body" for no input at all. whole
// names the top-level value in a type error, e.g. "the document". Other
// errors are worded as they are.
func Describe(body []byte, err error, whole string) string {
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	offset, _ := Offset(body, err)
	line, col := Position(body, offset)
	switch {
	case errors.Is(err, io.EOF) && blank(body):
		return "empty body"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		// A text cut short: a streaming reader's io.EOF between two
		// tokens, as encoding/json's io.ErrUnexpectedEOF inside one.
		return fmt.Sprintf("malformed JSON at line %d, column %d: unexpected end of input", line, col)
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("malformed JSON at line %d, column %d: %v", line, col, err)
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if path, ok := PathAt(body, offset); ok && path != "" {
			field = path
		}
		if field == "" {
			field = whole
		}
		return fmt.Sprintf("%s at line %d, column %d must be %s, not a JSON %s", field, line, col, kind(typeErr.Type), typeErr.Value)
	}
	return err.Error()
}

// Offset is the byte offset in body that Describe points at for err: the
// end of the input for a truncated text, the offending byte of a syntax
// error, the start of the value of a type error. ok is false for other
// errors (and for an empty body).
func Offset(body []byte, err error) (offset int64, ok bool) {
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF) && blank(body):
		return 0, false
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return int64(len(body)), true
	case errors.As(err, &syntaxErr):
		// The offset is just past the offending byte.
		return syntaxErr.Offset - 1, true
	case errors.As(err, &typeErr):
		return valueStart(body, typeErr.Offset), true
	}
	return 0, false
}

// kind names a Go type the way a JSON author would.
func kind(t reflect.Type) string {
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

// PathAt is the JSON path of the value that begins at offset in body, as
// an author reads it: `affected[0].ranges[1].events[0].introduced`, a key
// that is not a plain name in brackets (`packages["node_modules/x"]`).
// ok is false when no value begins there, or body cannot be read up to
// it. The json package's type errors name the fields without the array
// indexes (affected.ranges.events.introduced): this finds which element.
func PathAt(body []byte, offset int64) (path string, ok bool) {
	type frame struct {
		array bool
		key   string
		index int
	}
	var stack []frame
	awaitingKey := false // inside an object, before a member's key
	done := func() {     // a value ended: the next is a key or an element
		if n := len(stack); n > 0 {
			if stack[n-1].array {
				stack[n-1].index++
			} else {
				awaitingKey = true
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		start := dec.InputOffset()
		for start < int64(len(body)) && strings.IndexByte(" \t\r\n,:", body[start]) >= 0 {
			start++
		}
		if start > offset {
			return "", false
		}
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		delim, isDelim := tok.(json.Delim)
		if isDelim && (delim == '}' || delim == ']') {
			stack = stack[:len(stack)-1]
			awaitingKey = false
			done()
			continue
		}
		if awaitingKey {
			stack[len(stack)-1].key, awaitingKey = tok.(string), false
			continue
		}
		if start == offset {
			var b strings.Builder
			for _, f := range stack {
				switch {
				case f.array:
					fmt.Fprintf(&b, "[%d]", f.index)
				case plainName(f.key):
					if b.Len() > 0 {
						b.WriteByte('.')
					}
					b.WriteString(f.key)
				default:
					fmt.Fprintf(&b, "[%s]", strconv.Quote(f.key))
				}
			}
			return b.String(), true
		}
		if isDelim {
			stack = append(stack, frame{array: delim == '['})
			awaitingKey = delim == '{'
			continue
		}
		done()
	}
}

// plainName: a key a path may write after a dot.
func plainName(key string) bool {
	if key == "" {
		return false
	}
	for i, r := range key {
		if r != '_' && r != '-' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// blank reports whether body holds nothing but JSON's white space: no
// input at all, as a reader's io.EOF means only then.
func blank(body []byte) bool {
	return len(bytes.TrimLeft(body, " \t\r\n")) == 0
}
