// Package npm reads what an npm registry says of a package: the names it
// accepts, the settings that say which registry serves a name and with
// which credentials (npm's own .npmrc), and the package document.
//
// Nothing here names a registry: every registry comes from the operator's
// configuration, as `npm config get registry` prints it on the site.
package npm

import (
	"errors"
	"fmt"
	"strings"
)

// MaxNameLength is the longest name npm accepts for a new package; older
// packages may be longer, and they are read all the same.
const MaxNameLength = 214

// Name is a package name that passed ValidateName: "blog" or "@acme/blog".
type Name string

// Scope is the name's scope with its "@" ("@acme"), or "" when unscoped.
func (n Name) Scope() string {
	s := string(n)
	if !strings.HasPrefix(s, "@") {
		return ""
	}
	scope, _, _ := strings.Cut(s, "/")
	return scope
}

// PathSegment is the name as one segment of a registry URL's path, as the
// npm client sends it: a scoped name's slash is escaped ("@acme%2fblog");
// every other character of a valid name is URL-safe as it is.
func (n Name) PathSegment() string { return strings.Replace(string(n), "/", "%2f", 1) }

// ErrName is wrapped by every error of ValidateName.
var ErrName = errors.New("not a valid npm package name")

// ValidateName applies npm's rules for the names of existing packages
// (those of validate-npm-package-name for old packages, which a registry
// still serves): not empty, no leading dot or underscore, no surrounding
// space, only URL-safe characters, scope and name each, and not a reserved
// name. Capital letters and names past MaxNameLength are old packages'
// and accepted.
func ValidateName(s string) (Name, error) {
	fail := func(why string) (Name, error) { return "", fmt.Errorf("%w: %q %s", ErrName, s, why) }
	switch {
	case s == "":
		return fail("is empty")
	case strings.TrimSpace(s) != s:
		return fail("has spaces around it")
	case strings.HasPrefix(s, ".") || strings.HasPrefix(s, "_"):
		return fail("starts with a dot or an underscore")
	case s == "node_modules" || s == "favicon.ico":
		return fail("is reserved")
	}
	name := s
	if strings.HasPrefix(s, "@") {
		scope, rest, ok := strings.Cut(s[1:], "/")
		if !ok || scope == "" || rest == "" {
			return fail(`is not "@scope/name"`)
		}
		if !urlSafe(scope) {
			return fail("has a scope with characters a URL cannot carry as they are")
		}
		name = rest
	}
	if !urlSafe(name) {
		return fail("has characters a URL cannot carry as they are")
	}
	if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return fail("starts with a dot or an underscore")
	}
	return Name(s), nil
}

// urlSafe reports whether JavaScript's encodeURIComponent leaves s as it
// is: ASCII letters, digits and - _ . ! ~ * ' ( ).
func urlSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-_.!~*'()", c) >= 0:
		default:
			return false
		}
	}
	return true
}
