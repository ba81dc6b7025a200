package web

import (
	"testing"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/release"
)

// The skip form is not offered where the skip would be refused: an
// offered update that only clears an advisory (no publisher's mark) is a
// security release for the site, as Skips judges it.
func TestNoSkipFormForASecurityFix(t *testing.T) {
	t.Parallel()
	fix := release.Release{Version: "1.10.0"}
	d := catalog.Detail{Update: &fix, Releases: []release.ReleaseStatus{{Release: fix, SecurityFix: true}}}
	if !updateIsSecurity(d) {
		t.Error("an update that clears an advisory is offered for skipping")
	}
	d.Releases[0].SecurityFix = false
	if updateIsSecurity(d) {
		t.Error("a plain update is not offered for skipping")
	}
}
