package updatedoc

import (
	"github.com/upcheck/upcheck/internal/readmodel"
)

// OfflinePrefix starts the address of an offline source, "offline:NAME": a
// source upcheck never fetches, whose documents arrive by import only
// (`upcheck source import`, the Sources page's upload form), for sites
// with no way out to the publisher. It is readmodel.OfflinePrefix, the
// read model's (readmodel.SourceOffline): an offline source is stale only
// by its document's expiry.
const OfflinePrefix = readmodel.OfflinePrefix

// IsOffline reports whether a source's address names an offline source.
// It says nothing of whether the name is valid
// (readmodel.CheckOfflineSource).
func IsOffline(source string) bool { return readmodel.SourceKindOf(source) == readmodel.SourceOffline }
