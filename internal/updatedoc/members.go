package updatedoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// checkDuplicateKeys refuses an object that names the same key twice. The
// json package silently keeps the last one, while another reader of the
// same signed bytes may keep the first: two packages "blog" are two
// different answers to the same question.
func checkDuplicateKeys(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	return walkValue(dec, "")
}

func walkValue(dec *json.Decoder, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return invalidf(err, "update document: %v", err)
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch delim {
	case '{':
		seen := make(map[string]struct{})
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return invalidf(err, "update document: %v", err)
			}
			key, _ := tok.(string)
			if _, dup := seen[key]; dup {
				where := "the document"
				if path != "" {
					where = path
				}
				return invalidf(nil, "update document: key %q appears twice in %s", key, where)
			}
			seen[key] = struct{}{}
			if err := walkValue(dec, joinPath(path, key)); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			if err := walkValue(dec, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	// The closing delimiter.
	if _, err := dec.Token(); err != nil {
		return invalidf(err, "update document: %v", err)
	}
	return nil
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
