package store_test

import (
	"context"
	"maps"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

// The sources the Sources page and the local summary say (source_state)
// are those of the site upcheck runs beside: a source that only another
// site's components use is neither listed nor counted failing there, and
// one both use counts the local site's components alone.
func TestSourceStateIsTheLocalSites(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	d.MustExec(t, `INSERT INTO sites (name, token_hash) VALUES ('acme', sha256('t'))`)
	d.MustExec(t, `INSERT INTO components (site_id, code, name, installed_version, source_url)
		VALUES ((SELECT id FROM sites WHERE name = 'acme'), 'secret-pkg', 'secret-pkg', '1.0.0', 'npm:secret-pkg'),
		       ((SELECT id FROM sites WHERE name = 'acme'), 'shared', 'shared', '1.0.0', 'npm:shared'),
		       (1, 'shared', 'shared', '2.0.0', 'npm:shared')`)
	d.MustExec(t, `INSERT INTO sources (url, last_error, last_error_at, consecutive_failures, epoch)
		VALUES ('npm:secret-pkg', 'refused', clock_timestamp(), 3, 1)`)
	var urls []string
	var used []int64
	rows, err := d.Pool.Query(context.Background(), `SELECT url, components FROM source_state ORDER BY url`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var u string
		var n int64
		if err := rows.Scan(&u, &n); err != nil {
			t.Fatal(err)
		}
		urls, used = append(urls, u), append(used, n)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if len(urls) != 1 || urls[0] != "npm:shared" || used[0] != 1 {
		t.Errorf("source_state: %v used by %v; want only npm:shared, used by the local site's one component", urls, used)
	}
}

// Each site's summary counts the failing, untrusted and unsigned sources
// its own components use (site_source_state), not the local site's nor
// another site's, as its Sources list flags them; and each site's Sources list (SiteSourceHealth) is the
// sources its components use, a shared one counting that site's
// components alone.
func TestSummaryCountsTheAskedSitesSources(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.db.MustExec(t, `INSERT INTO sites (name, token_hash) VALUES ('acme', sha256('a')), ('globex', sha256('g'))`)
	var acme, globex int64
	b.db.QueryRow(t, `SELECT id FROM sites WHERE name = 'acme'`).Scan(&acme)
	b.db.QueryRow(t, `SELECT id FROM sites WHERE name = 'globex'`).Scan(&globex)
	b.db.MustExec(t, `INSERT INTO components (site_id, code, name, installed_version, source_url, pinned_key)
		VALUES ($1, 'acme-fail', 'acme-fail', '1.0.0', 'npm:acme-fail', NULL),
		       ($1, 'acme-fail-too', 'acme-fail-too', '1.0.0', 'npm:acme-fail-too', NULL),
		       ($1, 'acme-expiring', 'acme-expiring', '1.0.0', 'npm:acme-expiring', NULL),
		       ($1, 'shared', 'shared', '1.0.0', 'npm:shared', NULL),
		       ($1, 'shared-too', 'shared-too', '1.0.0', 'npm:shared', NULL),
		       (1, 'local-fail', 'local-fail', '1.0.0', 'https://l.example/fail.json', NULL),
		       (1, 'shared', 'shared', '2.0.0', 'npm:shared', NULL)`, acme)
	b.db.MustExec(t, `INSERT INTO sources (url, epoch, last_error, last_error_at, consecutive_failures)
		VALUES ('npm:acme-fail', 1, 'refused', clock_timestamp(), 3),
		       ('npm:acme-fail-too', 1, 'refused', clock_timestamp(), 1),
		       ('https://l.example/fail.json', 1, 'fetch: 503 Service Unavailable', clock_timestamp(), 1)`)
	b.db.MustExec(t, `INSERT INTO sources (url, epoch, document, document_hash, signature_state, expires_at, last_success_at, last_attempt_at)
		VALUES ('npm:acme-expiring', 1, 'doc', sha256('doc'), 'verified', clock_timestamp() + interval '1 day', clock_timestamp(), clock_timestamp()),
		       ('npm:shared', 1, 'doc', sha256('doc'), 'verified', NULL, clock_timestamp(), clock_timestamp())`)

	type counts struct{ failing, untrusted, unsigned int }
	for site, want := range map[int64]counts{
		acme:            {2, 1, 0}, // its two npm:acme-fail… fail, npm:acme-expiring's document expires within the warning
		store.LocalSite: {1, 0, 1}, // its document source fails and has no key pinned
		globex:          {0, 0, 0}, // no component
	} {
		sum, err := b.st.Summary(ctx, site, readmodel.DevSeparate)
		if err != nil {
			t.Fatal(err)
		}
		if got := (counts{sum.FailingSources, sum.UntrustedSources, sum.UnsignedSources}); got != want {
			t.Errorf("site %d's summary: failing, untrusted, unsigned sources %+v; want %+v", site, got, want)
		}
		// The Sources page's lines count its rows' flags: the same.
		rows, err := b.st.SiteSourceHealth(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		var listed counts
		for _, r := range rows {
			listed.failing += map[bool]int{true: 1}[r.Failing]
			listed.untrusted += map[bool]int{true: 1}[r.Untrusted]
			listed.unsigned += map[bool]int{true: 1}[r.Unsigned]
		}
		if listed != want {
			t.Errorf("site %d's sources flag failing, untrusted, unsigned %+v; want %+v", site, listed, want)
		}
	}

	for site, want := range map[int64]map[string]int{
		acme:            {"npm:acme-fail": 1, "npm:acme-fail-too": 1, "npm:acme-expiring": 1, "npm:shared": 2},
		store.LocalSite: {"https://l.example/fail.json": 1, "npm:shared": 1},
		globex:          {},
	} {
		rows, err := b.st.SiteSourceHealth(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, r := range rows {
			got[r.URL] = r.Components
		}
		if !maps.Equal(got, want) {
			t.Errorf("site %d's sources: %v; want %v", site, got, want)
		}
		if site == acme && (len(rows) < 2 || !rows[0].Failing || !rows[1].Failing) {
			t.Errorf("acme's sources do not list the failing one first: %+v", rows)
		}
	}
}
