package catalog

import (
	"context"
	"testing"

	"github.com/upcheck/upcheck/internal/store"
)

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
	if _, err := ds.Dismiss(ctx, store.NewDismissal{Code: "blog", AdvisoryID: "ACME-7", Reason: "accepted"}); err != nil {
		t.Fatal(err)
	}
	if s, c := vulnerable(); s != 0 || c != 0 {
		t.Fatalf("right after the dismissal: %d vulnerable in the summary, %d in the catalog; want 0", s, c)
	}
	if err := ds.Undismiss(ctx, "blog", "ACME-7", 0); err != nil {
		t.Fatal(err)
	}
	if s, c := vulnerable(); s != 1 || c != 1 {
		t.Fatalf("right after its end: %d vulnerable in the summary, %d in the catalog; want 1", s, c)
	}
}
