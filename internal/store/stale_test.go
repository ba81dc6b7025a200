package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// Stale means 48 hours without a successful read since the component was
// installed or its source last succeeded (the function upcheck_stale),
// judged on the database clock. A component installed 47h59m ago whose
// source never succeeded is not stale (it was never read successfully);
// at 48h01m it is. With a past success, the success's age decides. Every
// reader agrees: the catalog, the detail, the summary and source health.
func TestStaleCountsFromTheInstallationOrTheLastSuccess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	cases := []struct {
		code, installed, success string // ages as SQL intervals; "" success: never
		stale                    bool
	}{
		{"fresh", "47 hours 59 minutes", "", false},
		{"old", "48 hours 1 minute", "", true},
		{"read-recently", "200 hours", "47 hours 59 minutes", false},
		{"read-long-ago", "200 hours", "48 hours 1 minute", true},
		// A success older than the installation (a source the component
		// shares with others) still dates what the component knows.
		{"new-on-old-source", "1 minute", "48 hours 1 minute", true},
		{"offline-never", "47 hours 59 minutes", "", false},
		{"offline-never-old", "48 hours 1 minute", "", true},
	}
	for _, tc := range cases {
		url := "https://p.example/" + tc.code + ".json"
		if strings.HasPrefix(tc.code, "offline") {
			url = "offline:" + tc.code
		}
		b.db.MustExec(t, `INSERT INTO components (code, name, installed_version, source_url, created_at)
			VALUES ($1, $1, '1.0.0', $2, clock_timestamp() - $3::interval)`, tc.code, url, tc.installed)
		if tc.success == "" {
			if !strings.HasPrefix(tc.code, "offline") {
				b.db.MustExec(t, `INSERT INTO sources (url, epoch, last_attempt_at, last_error, last_error_at, consecutive_failures)
					VALUES ($1, 1, clock_timestamp(), 'fetch: 503 Service Unavailable', clock_timestamp(), 1)`, url)
			}
			continue
		}
		b.db.MustExec(t, `INSERT INTO sources (url, epoch, document, document_hash, last_success_at, last_attempt_at)
			VALUES ($1, 1, 'doc', sha256('doc'), clock_timestamp() - $2::interval, clock_timestamp() - $2::interval)`, url, tc.success)
	}

	entries, _, err := catalog.ReadPage(ctx, b.st, store.CatalogFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	catalog := map[string]bool{}
	for _, e := range entries {
		catalog[e.Code] = e.Stale
	}
	health, err := b.st.SourceHealth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]bool{}
	for _, s := range health {
		sources[s.URL] = s.Stale
	}
	want := 0
	for _, tc := range cases {
		d, err := b.st.ComponentDetail(ctx, store.LocalSite, tc.code)
		if err != nil {
			t.Fatal(err)
		}
		url := d.SourceURL
		if catalog[tc.code] != tc.stale || d.Stale != tc.stale || sources[url] != tc.stale {
			t.Errorf("%s (installed %s ago, success %q ago): catalog stale %v, detail %v, source %v; want %v",
				tc.code, tc.installed, tc.success, catalog[tc.code], d.Stale, sources[url], tc.stale)
		}
		if tc.stale {
			want++
		}
	}
	sum, err := b.st.Summary(ctx, store.LocalSite, readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Stale != want {
		t.Errorf("summary stale = %d, want %d", sum.Stale, want)
	}
	// A source shared by a component installed long ago and one installed
	// now is stale (its first component has waited 48 hours), the new
	// component is not.
	b.exec(t, `INSERT INTO components (code, name, installed_version, source_url, created_at)
		VALUES ('shared-new', 'shared-new', '1.0.0', 'https://p.example/old.json', clock_timestamp())`)
	if d, err := b.st.ComponentDetail(ctx, store.LocalSite, "shared-new"); err != nil || d.Stale {
		t.Errorf("a component installed now on a source never read: stale %v, %v; want false", d.Stale, err)
	}
}

// The catalog snapshot turns when a component never read successfully
// reaches 48 hours since its installation: the instant is one
// upcheck_read_model_turns_at knows.
func TestReadModelTurnsWhenANeverReadComponentTurnsStale(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.exec(t, `INSERT INTO components (code, name, installed_version, source_url, created_at)
		VALUES ('fresh', 'Fresh', '1.0.0', 'https://p.example/f.json', clock_timestamp() - interval '47 hours')`)
	var hours float64
	b.db.QueryRow(t, `SELECT extract(epoch FROM upcheck_read_model_turns_at() - clock_timestamp()) / 3600`).Scan(&hours)
	if hours < 0.99 || hours > 1.01 {
		t.Fatalf("the read model turns in %.3f hours, want 1 (48 hours after the installation)", hours)
	}
}
