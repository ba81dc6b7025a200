package jsonpos

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestPosition(t *testing.T) {
	t.Parallel()
	body := []byte("{\n  \"naïve\": 1,\r\n  x}")
	for _, tc := range []struct {
		offset    int64
		line, col int
	}{
		{-5, 1, 1},
		{0, 1, 1},
		{1, 1, 2},
		{2, 2, 1},
		{int64(len("{\n  \"naïve\"")), 2, 10}, // ï is two bytes, one column
		{int64(len("{\n  \"naïve\": 1,\r\n  ")), 3, 3},
		{1000, 3, 5},
	} {
		if line, col := Position(body, tc.offset); line != tc.line || col != tc.col {
			t.Errorf("Position(%d) = %d:%d, want %d:%d", tc.offset, line, col, tc.line, tc.col)
		}
	}
	if _, _, ok := Trailing([]byte("{} \n\t"), 2); ok {
		t.Error("white space after the value counted as trailing data")
	}
	if line, col, ok := Trailing([]byte("{}\n ]"), 2); !ok || line != 2 || col != 2 {
		t.Errorf("Trailing = %d:%d %v, want 2:2", line, col, ok)
	}
}

// PathAt names the element of every array on the way, and a key that is
// not a plain name in brackets; a type error's words use it.
func TestPathAt(t *testing.T) {
	body := []byte(`{"a": [1, {"b": [true, {"c d": 5}]}], "packages": {"node_modules/x": {"v": null}}, "e": [[], [7]]}`)
	for _, c := range []struct {
		value string
		want  string
	}{
		{`1`, "a[0]"},
		{`true`, "a[1].b[0]"},
		{`5`, `a[1].b[1]["c d"]`},
		{`null`, `packages["node_modules/x"].v`},
		{`[]`, "e[0]"},
		{`7`, "e[1][0]"},
		{`{"b"`, "a[1]"},
	} {
		off := bytes.Index(body, []byte(c.value))
		if got, ok := PathAt(body, int64(off)); !ok || got != c.want {
			t.Errorf("PathAt(%s) = %q, %v; want %q", c.value, got, ok, c.want)
		}
	}
	if got, ok := PathAt(body, 0); !ok || got != "" {
		t.Errorf("PathAt(the whole) = %q, %v; want the empty path", got, ok)
	}
	if got, ok := PathAt(body, int64(bytes.Index(body, []byte(`"b"`)))); ok {
		t.Errorf("PathAt(a key) = %q; want no value there", got)
	}
	var v struct {
		A []struct {
			B []int `json:"b"`
		} `json:"a"`
	}
	bad := []byte(`{"a": [{"b": [1]}, {"b": [2, "3"]}]}`)
	err := json.Unmarshal(bad, &v)
	if got := Describe(bad, err, "the body"); got != `a[1].b[1] at line 1, column 30 must be an integer, not a JSON string` {
		t.Errorf("Describe = %q", got)
	}
}

// A text cut short is said where it ends, whichever of io.EOF (a
// streaming reader between two tokens) and io.ErrUnexpectedEOF (inside
// one) the decoder gave; "empty body" is kept for no input at all.
func TestDescribeATextCutShort(t *testing.T) {
	t.Parallel()
	cut := []byte("{\n  \"packages\": {\n    \"\": {")
	for _, err := range []error{io.EOF, io.ErrUnexpectedEOF} {
		if got, want := Describe(cut, err, "the lockfile"), "malformed JSON at line 3, column 10: unexpected end of input"; got != want {
			t.Errorf("%v: %q, want %q", err, got, want)
		}
	}
	for _, body := range []string{"", " \n\t"} {
		if got := Describe([]byte(body), io.EOF, "the lockfile"); got != "empty body" {
			t.Errorf("%q: %q, want empty body", body, got)
		}
	}
}

// A lockfile cut off in the middle, as a failed upload leaves it, is
// refused with where it ends, never as an empty file.
func TestDecoderCutShortIsNotEmpty(t *testing.T) {
	t.Parallel()
	body := []byte(`{"name": "site", "lockfileVersion": 3, "packages": {"": {"name": "site"}, "node_modules/a": {"version": "1.0.0"}`)
	dec := json.NewDecoder(bytes.NewReader(body))
	var err error
	for err == nil {
		_, err = dec.Token()
	}
	if got := Describe(body, err, "the lockfile"); !strings.Contains(got, "unexpected end of input") {
		t.Errorf("a lockfile cut short: %q (%v)", got, err)
	}
}
