package manifest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
)

// unknownMember finds the key of the first member named name that the
// Go type t (the type body was decoded into) has no field for, and returns
// its byte offset. A name alone does not say which: "reason" is a member
// of a dismissal but not of a component, "version" of a component and a
// skip, so the walk follows the members down the types as encoding/json
// does (a field's name matched exactly, else without regard to case).
func unknownMember(body []byte, t reflect.Type, name string) (int64, bool) {
	off, found, err := walkUnknown(json.NewDecoder(bytes.NewReader(body)), body, t, name)
	return off, found && err == nil
}

// walkUnknown reads one value from dec, whose type is t (nil for a value
// that no field takes, such as an unknown member's).
func walkUnknown(dec *json.Decoder, body []byte, t reflect.Type, name string) (int64, bool, error) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return 0, false, err
	}
	switch tok {
	case json.Delim('{'):
		for dec.More() {
			before := dec.InputOffset()
			key, err := dec.Token()
			if err != nil {
				return 0, false, err
			}
			k, _ := key.(string)
			var ft reflect.Type
			known := t == nil // inside an unknown member nothing is named
			switch {
			case t != nil && t.Kind() == reflect.Struct:
				ft, known = fieldType(t, k)
			case t != nil && t.Kind() == reflect.Map:
				ft, known = t.Elem(), true
			}
			if !known && k == name {
				// The key starts at the first quote after the previous
				// token: only a comma and white space come between.
				return before + int64(bytes.IndexByte(body[before:], '"')), true, nil
			}
			if off, found, err := walkUnknown(dec, body, ft, name); err != nil || found {
				return off, found, err
			}
		}
	case json.Delim('['):
		var et reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			et = t.Elem()
		}
		for dec.More() {
			if off, found, err := walkUnknown(dec, body, et, name); err != nil || found {
				return off, found, err
			}
		}
	default:
		return 0, false, nil
	}
	_, err = dec.Token() // the closing delimiter
	return 0, false, err
}

// fieldType is the type of t's field that decodes the member key.
func fieldType(t reflect.Type, key string) (reflect.Type, bool) {
	var folded reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || tag == "-" {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if tag == key {
			return f.Type, true
		}
		if folded == nil && strings.EqualFold(tag, key) {
			folded = f.Type
		}
	}
	return folded, folded != nil
}
