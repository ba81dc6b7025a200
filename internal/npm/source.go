package npm

import (
	"fmt"
	"strings"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// SourcePrefix starts a manifest source that is an npm package:
// "npm:@acme/blog" (readmodel.NpmPrefix, the source kind's word).
const SourcePrefix = readmodel.NpmPrefix

// IsSource reports whether a manifest source names an npm package.
func IsSource(source string) bool { return strings.HasPrefix(source, SourcePrefix) }

// ParseSource returns the package an "npm:NAME" source names.
func ParseSource(source string) (Name, error) {
	name, ok := strings.CutPrefix(source, SourcePrefix)
	if !ok {
		return "", fmt.Errorf("%q does not start with %q", source, SourcePrefix)
	}
	return ValidateName(name)
}

// Source is the manifest source of a package.
func Source(name Name) string { return SourcePrefix + string(name) }
