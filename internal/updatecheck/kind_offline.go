package updatecheck

import (
	"context"

	"github.com/upcheck/upcheck/internal/fetch"
)

// offlineKind is the kind of the "offline:NAME" sources
// (readmodel.SourceOffline): update documents that come by import only
// (Importer), never fetched. Imported, stored and evaluated, they are
// documents (documentKind); the check leaves them alone and counts them.
type offlineKind struct{ documentKind }

func (offlineKind) fetched() bool { return false }

// request is never made: the check does not fetch an offline source
// (fetched).
func (offlineKind) request(*Checker, *job) (fetch.Request, failure) {
	panic("updatecheck: an offline source is never fetched")
}

// prepare is never asked: no request was made.
func (offlineKind) prepare(context.Context, *Checker, job, int64, fetch.Response, error) (pending, bool) {
	panic("updatecheck: an offline source is never fetched")
}
