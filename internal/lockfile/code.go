package lockfile

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/upcheck/upcheck/internal/npm"
)

// plainPart is a name part that can stand in a code as it is: lower-case
// letters, digits, '.', '_' and '-', starting and ending with a letter or
// a digit, with no "--" inside.
var plainPart = regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]*[a-z0-9])?$`)

// maxCode is the longest component code (manifest's rule).
const maxCode = 100

// Code is the component code of an npm package, by a rule that is stable
// (the same name always gives the same code) and gives no two names one
// code:
//   - an unscoped name whose text is plain is its own code
//     ("vitnode-blog" → "vitnode-blog");
//   - a scoped name whose scope and name are both plain is "SCOPE--NAME"
//     ("@vitnode/blog" → "vitnode--blog"): plain parts hold no "--", so
//     the one "--" says where the scope ends;
//   - any other name (capitals, characters a code lacks, a "--" of its
//     own, longer than a code may be) is its lower-cased text with every
//     run of other characters as one "-", cut to 80 characters and trimmed
//     of "-", "." and "_" at its ends (or "npm" when nothing is left), then "---"
//     and the first 12 hexadecimal digits of the name's SHA-256
//     ("JSONStream" → "jsonstream---…"): the "---", which the other two
//     forms never hold, keeps them apart, and the digest keeps such names
//     apart from each other.
//
// Plain means: lower-case letters, digits, '.', '_' and '-', starting and
// ending with a letter or a digit, and no "--".
func Code(name npm.Name) string {
	s := string(name)
	if scope := name.Scope(); scope != "" {
		rest := s[len(scope)+1:]
		if plain(scope[1:]) && plain(rest) && len(scope)-1+2+len(rest) <= maxCode {
			return scope[1:] + "--" + rest
		}
	} else if plain(s) && len(s) <= maxCode {
		return s
	}
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(strings.TrimPrefix(s, "@")) {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_') {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	readable := b.String()
	if len(readable) > 80 {
		readable = readable[:80]
	}
	readable = strings.Trim(readable, "-._")
	if readable == "" {
		readable = "npm"
	}
	sum := sha256.Sum256([]byte(s))
	return readable + "---" + hex.EncodeToString(sum[:6])
}

func plain(s string) bool { return plainPart.MatchString(s) && !strings.Contains(s, "--") }
