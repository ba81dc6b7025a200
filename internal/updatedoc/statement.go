package updatedoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A key statement is how a publisher rotates keys without every site
// editing its manifest: a small JSON document, served at the document's URL
// with ".keys" appended to its path, that names the new key set, signed
// (".keys.sig") by at least the threshold of the keys a site trusts now.
//
//	{"format":1,"type":"upcheck-keys","publisher":"acme","version":2,
//	 "keys":["ed25519:…"],"threshold":1}

// StatementType is the statement's "type" member.
const StatementType = "upcheck-keys"

// MaxStatementSize bounds a key statement: a few keys fit in a fraction.
const MaxStatementSize = 64 << 10

// KeyStatement is a parsed, valid key statement.
type KeyStatement struct {
	Publisher string
	Version   int64 // higher than the last accepted, or refused
	Set       KeySet
}

// statementMembers are the statement's members, exactly as spelled.
var statementMembers = map[string]bool{"format": true, "type": true, "publisher": true, "version": true, "keys": true, "threshold": true}

// ParseKeyStatement parses and validates a key statement. It is as strict
// as a document: exact member names (no other member, none twice, none in
// another case), one JSON value, at most MaxStatementSize bytes. Errors
// wrap [ErrInvalid].
func ParseKeyStatement(body []byte) (*KeyStatement, error) {
	if len(body) > MaxStatementSize {
		return nil, invalidf(nil, "key statement: %d bytes, at most %d are read", len(body), MaxStatementSize)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, invalidf(err, "key statement: not a JSON object")
	}
	raw := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, invalidf(err, "key statement: malformed JSON: %v", err)
		}
		name, _ := tok.(string)
		if !statementMembers[name] {
			return nil, invalidf(nil, "key statement: unknown member %q", name)
		}
		if _, dup := raw[name]; dup {
			return nil, invalidf(nil, "key statement: member %q appears twice", name)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, invalidf(err, "key statement: malformed JSON in %q: %v", name, err)
		}
		raw[name] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, invalidf(err, "key statement: malformed JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, invalidf(nil, "key statement: unexpected data after the JSON object")
	}

	var w struct {
		Format    int64
		Type      string
		Publisher string
		Version   int64
		Keys      []string
		Threshold int
	}
	for name, dst := range map[string]any{"format": &w.Format, "type": &w.Type, "publisher": &w.Publisher,
		"version": &w.Version, "keys": &w.Keys, "threshold": &w.Threshold} {
		v, ok := raw[name]
		if !ok {
			if name == "threshold" {
				continue // default 1
			}
			return nil, invalidf(nil, "key statement: %s is missing", name)
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return nil, invalidf(err, "key statement: %s has the wrong type: %s", name, v)
		}
	}
	switch {
	case w.Format != Format:
		return nil, invalidf(nil, "key statement: unsupported format %d (this reader understands format %d)", w.Format, Format)
	case w.Type != StatementType:
		return nil, invalidf(nil, "key statement: type %q is not %q", w.Type, StatementType)
	case strings.TrimSpace(w.Publisher) == "":
		return nil, invalidf(nil, "key statement: publisher is empty")
	case w.Version < 1:
		return nil, invalidf(nil, "key statement: version %d is not positive", w.Version)
	case len(w.Keys) > MaxSignatures:
		return nil, invalidf(nil, "key statement: %d keys, at most %d", len(w.Keys), MaxSignatures)
	}
	if _, ok := raw["threshold"]; ok && w.Threshold == 0 {
		return nil, invalidf(nil, "key statement: threshold 0 is not between 1 and the number of keys")
	}
	set, err := NewKeySet(w.Keys, w.Threshold)
	if err != nil {
		return nil, invalidf(err, "key statement: %v", err)
	}
	return &KeyStatement{Publisher: w.Publisher, Version: w.Version, Set: set}, nil
}

// FormatKeyStatement writes a statement as the publisher serves it: JSON
// with the members in order, keys sorted, ending in a newline.
func FormatKeyStatement(publisher string, version int64, set KeySet) []byte {
	b, _ := json.Marshal(struct {
		Format    int      `json:"format"`
		Type      string   `json:"type"`
		Publisher string   `json:"publisher"`
		Version   int64    `json:"version"`
		Keys      []string `json:"keys"`
		Threshold int      `json:"threshold"`
	}{Format, StatementType, publisher, version, set.KeyTexts(), set.Threshold()})
	return append(b, '\n')
}

// ErrStatementRefused wraps every refusal of a key statement by
// AcceptStatement.
var ErrStatementRefused = errors.New("key statement refused")

// ErrStatementNotNewer is wrapped, beside ErrStatementRefused, when a
// statement signed by the trusted keys is not newer than the last one
// accepted: most often that same statement, still published.
var ErrStatementNotNewer = errors.New("key statement is not newer")

// AcceptStatement decides a fetched statement: it must parse, be signed by
// at least the threshold of the trusted set, and carry a version higher
// than the last one accepted (0 for none). It returns the statement, or an
// error wrapping [ErrStatementRefused] that says why (with the statement
// too when only its version is not newer: [ErrStatementNotNewer]).
func AcceptStatement(body []byte, signatures string, trusted KeySet, lastVersion int64) (*KeyStatement, error) {
	st, err := ParseKeyStatement(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStatementRefused, err)
	}
	if _, err := VerifySet(body, signatures, trusted); err != nil {
		return nil, fmt.Errorf("%w: not signed by the keys trusted now: %w", ErrStatementRefused, err)
	}
	if st.Version <= lastVersion {
		return st, fmt.Errorf("%w: %w: version %d is not higher than %d, the last accepted", ErrStatementRefused, ErrStatementNotNewer, st.Version, lastVersion)
	}
	return st, nil
}
