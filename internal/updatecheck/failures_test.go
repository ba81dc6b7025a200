package updatecheck

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/testing/publisher"
)

// Failures lists the sources a check could not read, with their kind and
// Source health's sentence: those of that check only, not one that failed
// in an earlier check and was read since, and none for a check that did
// not run.
func TestFailuresOfACheck(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	b.standardSite(p) // /missing.json answers 404
	p.Fail("/down.json", http.StatusServiceUnavailable)
	b.sync(
		manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json"},
		manifest.Component{Code: "broken", Name: "Broken", Version: "1.0.0", Source: p.URL + "/missing.json"},
		manifest.Component{Code: "shop", Name: "Shop", Version: "1.0.0", Source: p.URL + "/down.json"},
	)
	ctx := context.Background()

	res := b.run(lease.Operator)
	got, err := b.checker.Failures(ctx, res)
	if err != nil {
		t.Fatal(err)
	}
	want := []SourceFailure{
		{Source: p.URL + "/down.json", Kind: readmodel.ErrorHTTPStatus, Message: "The publisher’s server answered 503 Service Unavailable."},
		{Source: p.URL + "/missing.json", Kind: readmodel.ErrorHTTPStatus, Message: "The publisher’s server answered 404 Not Found."},
	}
	if res.Failed != 2 || !reflect.DeepEqual(got, want) {
		t.Fatalf("failed %d, failures %+v\nwant %+v", res.Failed, got, want)
	}

	// The missing document is published: the next check lists only shop.
	p.Set("/missing.json", doc(1, map[string]string{"broken": pkgUpToDate}))
	res = b.run(lease.Operator)
	if got, err = b.checker.Failures(ctx, res); err != nil || !reflect.DeepEqual(got, want[:1]) {
		t.Fatalf("second check: failures %+v (%v), want %+v", got, err, want[:1])
	}
	// Only what that check wrote: under another epoch, nothing (shop's
	// failure is this check's, stamped with its epoch).
	if got, err = b.checker.Failures(ctx, Result{Status: LeaseLost, Epoch: res.Epoch + 1, Failed: 1}); err != nil || len(got) != 0 {
		t.Fatalf("a check under another epoch: failures %+v (%v), want none", got, err)
	}
	if got, err = b.checker.Failures(ctx, Result{Status: Busy}); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("a check that did not run: failures %#v (%v), want an empty list", got, err)
	}
}
