package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
)

// object is a JSON object that keeps its members in their order and their
// values as written, so that editing a document changes only what the edit
// is about (and unknown members stay).
type object []member

type member struct {
	name  string
	value json.RawMessage
}

// parseObject reads a JSON object; body has passed updatedoc.Lint, so its
// member names are distinct.
func parseObject(body []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var o object
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		o = append(o, member{name, value})
	}
	return o, nil
}

func (o object) get(name string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.name == name {
			return m.value, true
		}
	}
	return nil, false
}

// set replaces the member's value where it is, or adds the member at the
// end.
func (o *object) set(name string, value json.RawMessage) {
	for i := range *o {
		if (*o)[i].name == name {
			(*o)[i].value = value
			return
		}
	}
	*o = append(*o, member{name, value})
}

// setBefore is set, but a new member goes before the member named next
// (at the end when there is none).
func (o *object) setBefore(name string, value json.RawMessage, next string) {
	if _, ok := o.get(name); ok {
		o.set(name, value)
		return
	}
	for i, m := range *o {
		if m.name == next {
			*o = slices.Insert(*o, i, member{name, value})
			return
		}
	}
	*o = append(*o, member{name, value})
}

// put sets a member to v in JSON.
func (o *object) put(name string, v any) error {
	b, err := marshal(v)
	if err != nil {
		return err
	}
	o.set(name, b)
	return nil
}

// child is the object a member holds: an empty one when the member is
// absent or null.
func (o object) child(name string) (object, error) {
	raw, ok := o.get(name)
	if !ok || string(raw) == "null" {
		return object{}, nil
	}
	return parseObject(raw)
}

func (o object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		name, err := marshal(m.name)
		if err != nil {
			return nil, err
		}
		buf.Write(name)
		buf.WriteByte(':')
		buf.Write(m.value)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// marshal is json.Marshal without escaping <, > and &: ranges such as
// "<2.4.0" stay readable in the file.
func marshal(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
