package updatedoc

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// OfflinePrefix starts the address of an offline source, "offline:NAME": a
// source upcheck never fetches, whose documents arrive by import only
// (`upcheck source import`, the Sources page's upload form), for sites
// with no way out to the publisher. It is readmodel.OfflinePrefix, the
// read model's (readmodel.SourceOffline): an offline source is stale only
// by its document's expiry.
const OfflinePrefix = readmodel.OfflinePrefix

// offlineName is the NAME of "offline:NAME": short, lower-case, no spaces.
var offlineName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// IsOffline reports whether a source's address names an offline source.
// It says nothing of whether the name is valid (CheckOfflineSource).
func IsOffline(source string) bool { return readmodel.SourceKindOf(source) == readmodel.SourceOffline }

// CheckOfflineSource refuses an "offline:NAME" address whose NAME is not 1
// to 64 lower-case letters, digits, '.', '_' or '-', starting with a
// letter or a digit.
func CheckOfflineSource(source string) error {
	name, ok := strings.CutPrefix(source, OfflinePrefix)
	if !ok {
		return fmt.Errorf("%q does not start with %q", source, OfflinePrefix)
	}
	if !offlineName.MatchString(name) {
		return fmt.Errorf("offline source name %q must be 1 to 64 lower-case letters, digits, '.', '_' or '-', starting with a letter or a digit", name)
	}
	return nil
}
