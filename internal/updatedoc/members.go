package updatedoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode"

	"github.com/upcheck/upcheck/internal/jsonpos"
)

// The json package matches member names to struct fields ignoring case and
// keeps the last of two members that match the same field. So in
// {"version": "2.4.0", "Version": "9.9.9"} the release would be 9.9.9 to
// upcheck and 2.4.0 to a reader that matches names exactly, and a lone
// "Security": true would make a security release that the format (whose
// names are exact) does not contain. The member check closes both holes
// before anything is decoded: within one object no two member names may be
// equal ignoring case, and a name that differs from one of format 1's only
// by case is refused instead of being read as that member.

// memberSchema is what the member check knows about one JSON value of a
// format 1 document. An object with fixed members (the document, a package,
// a release, an advisory) has names; a map or an array has elem, the schema
// of each value in it. A nil *memberSchema is a value the format does not
// describe (an unknown member, a string): only its duplicates are checked.
type memberSchema struct {
	names  map[string]*memberSchema // exact member name -> schema of its value
	folded map[string]string        // foldName(member name) -> member name
	elem   *memberSchema
}

// documentSchema is derived from the wire types, so that the check and the
// decoder cannot disagree about which names exist.
var documentSchema = schemaOf(reflect.TypeFor[wireDocument]())

func schemaOf(t reflect.Type) *memberSchema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		s := &memberSchema{names: make(map[string]*memberSchema), folded: make(map[string]string)}
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			s.names[name] = schemaOf(f.Type)
			s.folded[foldName(name)] = name
		}
		return s
	case reflect.Map, reflect.Slice:
		// json.RawMessage is a slice of bytes: no members inside.
		if elem := schemaOf(t.Elem()); elem != nil {
			return &memberSchema{elem: elem}
		}
	}
	return nil
}

// foldName folds a member name the way the json package does when it
// matches names to fields: every rune becomes the smallest rune of its
// case-folding orbit. Two names fold alike exactly when strings.EqualFold
// holds, so "ſecurity" (with a long s) and "Security" both collide with
// "security", as they do in the decoder.
func foldName(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range name {
		for {
			next := unicode.SimpleFold(r)
			if next <= r {
				r = next
				break
			}
			r = next
		}
		b.WriteRune(r)
	}
	return b.String()
}

// checkMembers walks the body, which must already have been decoded once
// (the decoder bounds the nesting depth, which makes the recursion safe),
// and records where each value starts. It returns every duplicate member,
// and every member named like one of format 1's members but not spelled
// like it. They are apart because a duplicate is wrong in any document
// while a misspelling is only wrong once the document is known to be of
// format 1. ok is false when the walk itself failed (the problem is then
// recorded).
func (c *checker) checkMembers() (duplicates, misspelled []Problem, ok bool) {
	w := memberWalker{c: c, dec: json.NewDecoder(bytes.NewReader(c.body))}
	if err := w.value("", documentSchema); err != nil {
		c.addAt("", 0, false, err)
		return nil, nil, false
	}
	return w.duplicates, w.misspelled, true
}

type memberWalker struct {
	c          *checker
	dec        *json.Decoder
	duplicates []Problem
	misspelled []Problem
}

// next is the offset where the next token starts: the decoder's offset is
// the end of the last one, before white space and separators.
func (w *memberWalker) next() int64 {
	off := w.dec.InputOffset()
	for off < int64(len(w.c.body)) && bytes.IndexByte([]byte(" \t\r\n:,"), w.c.body[off]) >= 0 {
		off++
	}
	return off
}

// problem builds a member problem placed at the member's name.
func (w *memberWalker) problem(path string, offset int64, format string, args ...any) Problem {
	err := invalidf(nil, format, args...)
	line, col := jsonpos.Position(w.c.body, offset)
	return Problem{Path: path, Line: line, Column: col, Message: err.Error(), err: err}
}

func (w *memberWalker) value(path string, s *memberSchema) error {
	if _, seen := w.c.at[path]; !seen && w.c.at != nil {
		w.c.at[path] = w.next()
	}
	tok, err := w.dec.Token()
	if err != nil {
		return invalidf(err, "update document: %v", err)
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch delim {
	case '{':
		if err := w.object(path, s); err != nil {
			return err
		}
	case '[':
		var elem *memberSchema
		if s != nil {
			elem = s.elem
		}
		for i := 0; w.dec.More(); i++ {
			if err := w.value(fmt.Sprintf("%s[%d]", path, i), elem); err != nil {
				return err
			}
		}
	}
	// The closing delimiter.
	if _, err := w.dec.Token(); err != nil {
		return invalidf(err, "update document: %v", err)
	}
	return nil
}

// object checks the members of one object; the opening brace has been
// read.
func (w *memberWalker) object(path string, s *memberSchema) error {
	seen := make(map[string]string) // foldName(name) -> name as written
	for w.dec.More() {
		at := w.next()
		tok, err := w.dec.Token()
		if err != nil {
			return invalidf(err, "update document: %v", err)
		}
		name, _ := tok.(string)
		member := joinPath(path, name)
		folded := foldName(name)
		earlier, dup := seen[folded]
		if dup {
			if earlier == name {
				w.duplicates = append(w.duplicates, w.problem(member, at,
					"update document: %s: duplicate member %q", pathName(path), name))
			} else {
				w.duplicates = append(w.duplicates, w.problem(member, at,
					"update document: %s: duplicate member %q (same name as %q ignoring case)", pathName(path), name, earlier))
			}
		} else {
			seen[folded] = name
		}

		var child *memberSchema
		switch {
		case s == nil:
		case s.names != nil:
			var known bool
			child, known = s.names[name]
			if want, near := s.folded[folded]; !known && near && !dup {
				w.misspelled = append(w.misspelled, w.problem(member, at,
					"update document: %s: member %q must be spelled %q (member names are case-sensitive)", pathName(path), name, want))
			}
		default:
			child = s.elem
		}
		if err := w.value(member, child); err != nil {
			return err
		}
	}
	return nil
}

// pathName names the object at path in a message.
func pathName(path string) string {
	if path == "" {
		return "top level"
	}
	return path
}

// joinPath extends a JSON path by an object key, quoting keys that are not
// plain identifiers (package codes may contain anything).
func joinPath(path, key string) string {
	plain := key != "" && strings.IndexFunc(key, func(r rune) bool {
		return !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0
	switch {
	case !plain:
		return fmt.Sprintf("%s[%q]", path, key)
	case path == "":
		return key
	default:
		return path + "." + key
	}
}
