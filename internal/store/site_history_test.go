package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/store"
)

// A site's pushes are read through audit_log_site_push
// (migrations/00033_site_history.sql) however many rows the fleet's audit
// log holds: 2,000 sites with 25 pushes each and as many other rows, a
// site's first page is read from the site's own index entries, newest
// first, never by scanning the log.
func TestSitePushesReadThroughTheirIndex(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	const sites, pushes = 2000, 25
	b.exec(t, `INSERT INTO audit_log (at, action, detail)
		SELECT clock_timestamp() - make_interval(secs => 50000 - g), 'site.push',
		       jsonb_build_object('site', 'site-' || (g % 2000), 'file', 'package-lock.json', 'sha256', md5(g::text),
		                          'unchanged', g % 3 = 0, 'added', g % 7, 'changed', 0, 'removed', g % 2,
		                          'installed', g % 7, 'uninstalled', g % 2)
		FROM generate_series(1, 50000) g`)
	b.exec(t, `INSERT INTO audit_log (action, detail)
		SELECT 'site.policy', jsonb_build_object('site', 'site-' || (g % 2000)) FROM generate_series(1, 50000) g`)
	b.exec(t, `ANALYZE audit_log`)

	site := store.Site{Name: "site-7", CreatedAt: time.Now().Add(-24 * time.Hour)}
	rows, err := b.st.SitePushes(ctx, site, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 10 || rows[0].File != "package-lock.json" {
		t.Fatalf("site-7's first page: %+v", rows)
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].ID >= rows[i-1].ID {
			t.Errorf("site-7's pushes are not newest first: %d then %d", rows[i-1].ID, rows[i].ID)
		}
	}
	all, err := b.st.SitePushes(ctx, site, 100, 0)
	if err != nil || len(all) != pushes {
		t.Errorf("site-7 has %d pushes, want %d (%v)", len(all), pushes, err)
	}
	// Since its registration: a site registered after its name's last
	// push lists none of them.
	if none, err := b.st.SitePushes(ctx, store.Site{Name: "site-7", CreatedAt: time.Now()}, 10, 0); err != nil || len(none) != 0 {
		t.Errorf("site-7 registered again lists %d pushes of its first life (%v)", len(none), err)
	}

	// queries/site_push.sql, SitePushList.
	var lines []string
	r, err := b.db.Pool.Query(ctx, `EXPLAIN (FORMAT TEXT)
		SELECT id, at, detail FROM audit_log
		WHERE action = 'site.push' AND detail->>'site' = $1::text AND at >= $2::timestamptz
		ORDER BY id DESC LIMIT $3::int OFFSET $4::int`, "site-7", site.CreatedAt, 51, 0)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var l string
		if err := r.Scan(&l); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	plan := strings.Join(lines, "\n")
	if !strings.Contains(plan, "audit_log_site_push") || strings.Contains(plan, "Seq Scan") || strings.Contains(plan, "Sort") {
		t.Errorf("a site's pushes are not read through audit_log_site_push:\n%s", plan)
	}
}

// A refused push is recorded only while the site's last push accepted is
// the one before the refused push began: a push accepted meanwhile,
// racing it, stands (its write removed the refusal), and the refusal
// that arrives after it is not recorded over it.
func TestAPushRefusalDoesNotOutliveAPushAcceptedSince(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	site, err := b.st.SiteCreate(ctx, "acme", "", make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.PushRefused(ctx, site.ID, site.PushedAt, "package-lock.json", "line 1: empty body"); err != nil {
		t.Fatal(err)
	}
	if n := b.count(t, `SELECT count(*) FROM site_push_refusals WHERE site_id = $1`, site.ID); n != 1 {
		t.Fatalf("a push refused before any was accepted: %d rows", n)
	}
	// A push is accepted meanwhile: its transaction removes the refusal.
	var at time.Time
	err = b.st.WithTx(ctx, func(tx *store.Tx) error {
		at, err = tx.SitePushed(ctx, site.ID, store.SitePush{Site: "acme", File: "package-lock.json"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The refused push that began before it records nothing.
	if err := b.st.PushRefused(ctx, site.ID, site.PushedAt, "package-lock.json", "line 2: unexpected end of input"); err != nil {
		t.Fatal(err)
	}
	if n := b.count(t, `SELECT count(*) FROM site_push_refusals WHERE site_id = $1`, site.ID); n != 0 {
		t.Errorf("a refusal older than the push accepted since stands: %d rows", n)
	}
	// One that began after it is recorded.
	if err := b.st.PushRefused(ctx, site.ID, &at, "package-lock.json", "line 3: unexpected end of input"); err != nil {
		t.Fatal(err)
	}
	if n := b.count(t, `SELECT count(*) FROM site_push_refusals WHERE site_id = $1`, site.ID); n != 1 {
		t.Errorf("a refusal after the last push accepted: %d rows", n)
	}
}
