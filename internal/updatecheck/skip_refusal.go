package updatecheck

import (
	"errors"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// SkipRefusalOf is why err refused a skip or an unskip, for
// readmodel.SkipRefusalText; "" for an error that is not the operator's
// to correct (a component that is not installed among them: its words
// are the caller's).
func SkipRefusalOf(err error) readmodel.SkipRefusal {
	for _, r := range []struct {
		err error
		r   readmodel.SkipRefusal
	}{
		{store.ErrReasonRequired, readmodel.SkipReasonRequired},
		{store.ErrReasonTooLong, readmodel.SkipReasonTooLong},
		{store.ErrFromManifest, readmodel.SkipFromManifest},
		{ErrSkipNotAVersion, readmodel.SkipNotAVersion},
		{ErrSkipNotNewer, readmodel.SkipNotNewer},
		{ErrSkipNoSuchRelease, readmodel.SkipNoSuchRelease},
		{ErrSkipPrerelease, readmodel.SkipPrerelease},
		{ErrSkipWayOut, readmodel.SkipWayOut},
		{ErrSkipSecurity, readmodel.SkipSecurity},
		{ErrSkipNotEvaluated, readmodel.SkipNotEvaluated},
	} {
		if errors.Is(err, r.err) {
			return r.r
		}
	}
	return ""
}
