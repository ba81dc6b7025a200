package catalog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// standardSite is, set up with SQL as a first check of updatecheck's
// standard site leaves it: gallery's current result lists ACME-2 (high,
// <=3.0.0, no fix), blog's ACME-1 (critical, fixed in 2.4.0), forms' none;
// blog and gallery count as vulnerable.
func (b *bundle) standardSite() {
	b.t.Helper()
	const url = "https://p.example/acme.json"
	b.db.MustExec(b.t, `INSERT INTO components (code, name, installed_version, source_url) VALUES
		('core', 'Core', '1.9.0', '`+url+`'), ('blog', 'Blog', '2.3.0', '`+url+`'),
		('gallery', 'Gallery', '3.0.0', '`+url+`'), ('forms', 'Forms', '1.0.0', '`+url+`')`)
	b.db.MustExec(b.t, `INSERT INTO sources (url, epoch, document, document_hash, last_success_at, last_attempt_at) VALUES
		('`+url+`', 1, 'doc', sha256('doc'), '2099-01-03T00:00:00Z', '2099-01-03T00:00:00Z')`)
	result := func(code, version, ids, advisories string) {
		b.db.MustExec(b.t, `INSERT INTO component_results (code, source_url, installed_version, core_version, document_hash,
			update_available, security, advisories, advisory_ids, evaluation, epoch)
			VALUES ($1, $2, $3, '1.9.0', sha256('doc'), false, false, $4, $5, jsonb_build_object('advisories', $4::jsonb), 1)`,
			code, url, version, advisories, ids)
	}
	result("core", "1.9.0", "{}", "[]")
	result("blog", "2.3.0", "{ACME-1}", `[{"id": "ACME-1", "severity": "critical", "affected": "<2.4.0", "fixed_in": "2.4.0", "no_fix": false}]`)
	result("gallery", "3.0.0", "{ACME-2}", `[{"id": "ACME-2", "severity": "high", "affected": "<=3.0.0", "no_fix": true}]`)
	result("forms", "1.0.0", "{}", "[]")
}

// dismissGallery dismisses gallery's ACME-2.
func (b *bundle) dismissGallery(expires *time.Time) {
	b.t.Helper()
	if _, err := NewDismissals(b.store, b.reads).Dismiss(context.Background(), store.NewDismissal{Site: store.LocalSite, Code: "gallery", AdvisoryID: "ACME-2",
		Reason: "  image metadata is stripped by the proxy \n", ExpiresAt: expires}); err != nil {
		b.t.Fatal(err)
	}
}

func (b *bundle) vulnerable() int {
	b.t.Helper()
	sum, err := b.store.Summary(context.Background(), store.LocalSite, readmodel.DevSeparate)
	if err != nil {
		b.t.Fatal(err)
	}
	return sum.Vulnerable
}

// galleryAdvisory is ACME-2 on gallery's detail page.
func (b *bundle) galleryAdvisory() AdvisoryState {
	b.t.Helper()
	d, err := b.reads.Detail(context.Background(), "gallery")
	if err != nil {
		b.t.Fatal(err)
	}
	for _, a := range d.Advisories {
		if a.ID == "ACME-2" {
			return a
		}
	}
	b.t.Fatalf("gallery's page lists no ACME-2: %+v", d.Advisories)
	return AdvisoryState{}
}

// vulnerableSite is a core and a blog whose current result lists ACME-7
// (high, no fix), set up with SQL: the blog counts as vulnerable.
var vulnerableSite = []string{
	`INSERT INTO components (code, name, installed_version, source_url) VALUES
		('core', 'Core', '1.9.0', 'https://p.example/acme.json'),
		('blog', 'Blog', '2.3.0', 'https://p.example/acme.json')`,
	`INSERT INTO sources (url, epoch, document, document_hash, last_success_at, last_attempt_at) VALUES
		('https://p.example/acme.json', 1, 'doc', sha256('doc'), '2099-01-03T00:00:00Z', '2099-01-03T00:00:00Z')`,
	`INSERT INTO component_results (code, source_url, installed_version, core_version, document_hash,
		update_available, security, advisories, advisory_ids, evaluation, epoch) VALUES
		('core', 'https://p.example/acme.json', '1.9.0', '1.9.0', sha256('doc'), false, false, '[]', '{}', '{}', 1),
		('blog', 'https://p.example/acme.json', '2.3.0', '1.9.0', sha256('doc'), false, false,
		 '[{"id": "ACME-7", "severity": "high", "no_fix": true}]', '{ACME-7}',
		 '{"advisories": [{"id": "ACME-7", "severity": "high"}]}', 1)`,
}

// A dismissal and its end drop this process's cached summary and snapshot
// at once (doc.go): the read right after each shows it, although the
// cached values are fresh enough to be served as they are.
func TestDismissalsDropTheCachedReads(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, sql := range vulnerableSite {
		b.db.MustExec(t, sql)
	}
	ctx := context.Background()
	vulnerable := func() (summary, catalog int) {
		t.Helper()
		sum, err := b.reads.Summary(ctx)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := b.reads.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, counts, err := snap.Page(store.CatalogFilter{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		return sum.Vulnerable, counts.Vulnerable
	}
	if s, c := vulnerable(); s != 1 || c != 1 {
		t.Fatalf("before the dismissal: %d vulnerable in the summary, %d in the catalog; want 1", s, c)
	}
	ds := NewDismissals(b.store, b.reads)
	if _, err := ds.Dismiss(ctx, store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-7", Reason: "accepted"}); err != nil {
		t.Fatal(err)
	}
	if s, c := vulnerable(); s != 0 || c != 0 {
		t.Fatalf("right after the dismissal: %d vulnerable in the summary, %d in the catalog; want 0", s, c)
	}
	if err := ds.Undismiss(ctx, store.LocalSite, "blog", "ACME-7", 0); err != nil {
		t.Fatal(err)
	}
	if s, c := vulnerable(); s != 1 || c != 1 {
		t.Fatalf("right after its end: %d vulnerable in the summary, %d in the catalog; want 1", s, c)
	}
}

// The summary's vulnerable count drops when an advisory is dismissed and
// comes back by itself when the dismissal expires: the database clock
// judges it when read, nothing runs at the expiry.
func TestSummaryVulnerableReturnsAfterExpiry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.standardSite()
	if n := b.vulnerable(); n != 2 {
		t.Fatalf("vulnerable before = %d, want blog and gallery", n)
	}
	until := time.Now().Add(24 * time.Hour)
	b.dismissGallery(&until)
	if n := b.vulnerable(); n != 1 {
		t.Fatalf("vulnerable after dismissing gallery's advisory = %d, want 1", n)
	}
	a := b.galleryAdvisory()
	if !a.Dismissed || a.Dismissal == nil || a.Dismissal.Reason != "image metadata is stripped by the proxy" || len(a.Changes) != 0 {
		t.Fatalf("gallery's advisory = %+v, want dismissed with its trimmed reason", a)
	}
	b.db.MustExec(t, `UPDATE advisory_dismissals SET dismissed_at = clock_timestamp() - interval '2 days',
		expires_at = clock_timestamp() - interval '1 second'`)
	if n := b.vulnerable(); n != 2 {
		t.Fatalf("vulnerable after the expiry = %d, want gallery to count again", n)
	}
	if a := b.galleryAdvisory(); a.Dismissed || a.Dismissal == nil || !a.Dismissal.Expired || len(a.Changes) != 0 {
		t.Fatalf("gallery's advisory after the expiry = %+v %+v, want it counting, its dismissal expired", a, a.Dismissal)
	}
}

// Dismissing needs an installed component and an advisory that affects it
// now; restoring ends the dismissal whatever state it is in.
func TestDismissRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.standardSite()
	ctx := context.Background()
	if _, err := NewDismissals(b.store, b.reads).Dismiss(ctx, store.NewDismissal{Site: store.LocalSite, Code: "nope", AdvisoryID: "ACME-2", Reason: "x"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown component: %v", err)
	}
	if _, err := NewDismissals(b.store, b.reads).Dismiss(ctx, store.NewDismissal{Site: store.LocalSite, Code: "forms", AdvisoryID: "ACME-2", Reason: "x"}); !errors.Is(err, ErrNoSuchAdvisory) {
		t.Fatalf("advisory of another component: %v", err)
	}
	if _, err := NewDismissals(b.store, b.reads).Dismiss(ctx, store.NewDismissal{Site: store.LocalSite, Code: "gallery", AdvisoryID: "ACME-2", Reason: " "}); !errors.Is(err, store.ErrReasonRequired) {
		t.Fatalf("blank reason: %v", err)
	}
	b.dismissGallery(nil)
	if err := NewDismissals(b.store, b.reads).Undismiss(ctx, store.LocalSite, "gallery", "ACME-2", 0); err != nil {
		t.Fatal(err)
	}
	if a := b.galleryAdvisory(); a.Dismissed || a.Dismissal != nil {
		t.Fatalf("restored advisory = %+v", a)
	}
	var history int
	b.db.QueryRow(t, "SELECT count(*) FROM advisory_dismissals WHERE ended_how = 'undone'").Scan(&history)
	if history != 1 {
		t.Fatalf("%d undone dismissals kept, want 1", history)
	}
}
