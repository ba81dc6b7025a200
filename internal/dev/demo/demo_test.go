package demo

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// The demo shows every kind of outcome a newcomer should see.
func TestDemoShowsEveryOutcome(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	st := store.New(d.Pool)
	lm, err := lease.New(st, lease.DefaultTimings())
	if err != nil {
		t.Fatal(err)
	}
	f := fetch.New(fetch.Config{AllowPrivate: true}, nil)
	defer f.Close()
	c := updatecheck.New(st, lm, f, slog.Default())

	p, err := NewPublisher(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	ctx := context.Background()
	if _, err := updatecheck.NewSyncer(c).Sync(ctx, p.Manifest(srv.URL)); err != nil {
		t.Fatal(err)
	}
	res, err := c.RunLockedUpdateCheck(ctx, lease.Operator, "demo")
	// Shop's source fails by design: the check completes with failures.
	if err != nil || res.Status != updatecheck.CompletedWithFailures || res.Fetched != 3 || res.Failed != 1 {
		t.Fatalf("demo check = %+v %v", res, err)
	}
	sum, err := catalog.New(st).Summary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Components != 7 || sum.UpdatesAvailable != 2 || sum.SecurityUpdates != 1 || sum.Vulnerable != 2 || sum.FailingSources != 1 {
		t.Fatalf("demo summary = %+v", sum)
	}
	entries, _, err := catalog.ReadPage(ctx, st, store.CatalogFilter{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]store.CatalogEntry{}
	for _, e := range entries {
		by[e.Code] = e
	}
	switch {
	case !by["core"].UpdateAvailable || by["core"].UpdateVersion != "1.10.0":
		t.Errorf("core: %+v", by["core"])
	case !by["blog"].Security:
		t.Errorf("blog: %+v", by["blog"])
	case !by["gallery"].Vulnerable || by["gallery"].UpdateAvailable:
		t.Errorf("gallery: %+v", by["gallery"])
	case !by["newsletter"].NeedsNewerCore || by["newsletter"].LastError != "":
		t.Errorf("newsletter (signed, needs a newer core): %+v", by["newsletter"])
	case by["forms"].UpdateAvailable || by["forms"].LastError != "" || by["forms"].LastSuccessAt == nil:
		t.Errorf("forms (up to date): %+v", by["forms"])
	case by["shop"].LastError == "":
		t.Errorf("shop (failing source): %+v", by["shop"])
	}
}
