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
	"github.com/upcheck/upcheck/internal/npm"
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

// The demo site of `make run` (NpmManifest) checked with its registry: the
// npm components are read beside the documents, only Shop fails, the
// summary counts the deprecated version, the trust downgrade and the
// updates (core, blog, seo, comments, analytics), and the next check gets
// a 304 for every package document.
func TestDemoNpmSiteShowsEveryOutcome(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	st := store.New(d.Pool)
	timings := lease.DefaultTimings()
	timings.Cooldown = 0 // two checks in a row
	lm, err := lease.New(st, timings)
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
	reg, err := npm.ParseRegistryURL(RegistryURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	c.UseNpm(&npm.Client{Fetcher: f, Registries: npm.Registries{Default: reg}})
	ctx := context.Background()
	if _, err := updatecheck.NewSyncer(c).Sync(ctx, p.NpmManifest(srv.URL)); err != nil {
		t.Fatal(err)
	}
	res, err := c.RunLockedUpdateCheck(ctx, lease.Operator, "demo")
	if err != nil || res.Status != updatecheck.CompletedWithFailures || res.Failed != 1 {
		t.Fatalf("demo check = %+v %v", res, err)
	}
	sum, err := catalog.New(st).Summary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Components != 12 || sum.UpdatesAvailable != 5 || sum.Deprecated != 1 || sum.TrustDowngrades != 1 || sum.FailingSources != 1 {
		t.Fatalf("demo summary = %+v", sum)
	}
	// events: 4.0.1 skipped, 4.1.0 waiting for its soak: nothing offered.
	var update, waiting, skipped string
	if err := d.Pool.QueryRow(ctx, `SELECT coalesce(update_version, ''), coalesce(waiting_version, ''), coalesce(skipped_version, '')
		FROM component_state WHERE code = 'events' AND evaluated`).Scan(&update, &waiting, &skipped); err != nil {
		t.Fatal(err)
	}
	if update != "" || waiting != "4.1.0" || skipped != "4.0.1" {
		t.Errorf("events: update %q, waiting %q, skipped %q; want none, 4.1.0 and 4.0.1", update, waiting, skipped)
	}
	again, err := c.RunLockedUpdateCheck(ctx, lease.Operator, "demo")
	if err != nil || again.Failed != 1 || again.NotModified != 5 {
		t.Fatalf("the second check = %+v %v, want the five package documents not modified", again, err)
	}
}
