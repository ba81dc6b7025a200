package updatecheck

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/lease"
)

var update = flag.Bool("update", false, "rewrite golden files")

// The summary over a table of stored states, compared with golden JSON.
// Each state is set up with SQL so its timestamps are fixed; "stale" uses
// dates far in the past, "fresh" ones in the far future, so the 48-hour rule
// does not depend on when the test runs.
func TestSummaryGolden(t *testing.T) {
	t.Parallel()
	const components = `INSERT INTO components (code, name, installed_version, source_url) VALUES
		('core', 'Core', '1.9.0', 'https://p.example/core.json'),
		('blog', 'Blog', '2.3.0', 'https://p.example/acme.json'),
		('forms', 'Forms', '1.0.0', 'https://p.example/acme.json'),
		('local', 'Local', '0.1.0', NULL)`
	const sources = `INSERT INTO sources (url, epoch, last_success_at) VALUES
		('https://p.example/core.json', 1, '2099-01-01T00:00:00Z'),
		('https://p.example/acme.json', 1, '2099-01-01T00:00:00Z')`
	result := func(code, source, version, success string, update, security, vulnerable bool) string {
		successSQL := "NULL"
		if success != "" {
			successSQL = "'" + success + "'"
		}
		return `INSERT INTO component_results (code, source_url, installed_version, last_success_at, update_available, security, vulnerable, epoch)
			VALUES ('` + code + `', '` + source + `', '` + version + `', ` + successSQL + `, ` + boolSQL(update) + `, ` + boolSQL(security) + `, ` + boolSQL(vulnerable) + `, 1)`
	}
	cases := []struct {
		name string
		sql  []string
	}{
		{"no-components", nil},
		{"never-checked", []string{components}},
		{"one-source-never-succeeded", []string{components, sources,
			result("core", "https://p.example/core.json", "1.9.0", "2099-01-02T00:00:00Z", true, false, false),
			result("blog", "https://p.example/acme.json", "2.3.0", "2099-01-03T00:00:00Z", true, true, true),
			result("forms", "https://p.example/acme.json", "1.0.0", "", false, false, false),
			`UPDATE sources SET last_error = 'fetch: 503', consecutive_failures = 2 WHERE url = 'https://p.example/acme.json'`,
		}},
		{"all-succeeded", []string{components, sources,
			result("core", "https://p.example/core.json", "1.9.0", "2099-01-02T00:00:00Z", true, false, false),
			result("blog", "https://p.example/acme.json", "2.3.0", "2099-01-03T00:00:00Z", true, true, true),
			result("forms", "https://p.example/acme.json", "1.0.0", "2099-01-04T00:00:00Z", false, false, false),
			`INSERT INTO check_runs (trigger, actor, status, started_at, finished_at) VALUES
				('manual', 'a@x', 'completed', '2099-01-04T00:00:00Z', '2099-01-04T00:00:05Z'),
				('manual', 'b@x', 'cooldown', '2099-01-04T00:01:00Z', '2099-01-04T00:01:00Z')`,
		}},
		{"core-counts-once", []string{
			`INSERT INTO components (code, name, installed_version, source_url) VALUES ('core', 'Core', '1.0.0', 'https://p.example/all.json'), ('a', 'A', '1.0.0', 'https://p.example/all.json')`,
			`INSERT INTO sources (url, epoch) VALUES ('https://p.example/all.json', 1)`,
			result("core", "https://p.example/all.json", "1.0.0", "2099-01-01T00:00:00Z", true, true, false),
			result("a", "https://p.example/all.json", "1.0.0", "2099-01-01T00:00:00Z", false, false, false),
		}},
		{"stale", []string{components, sources,
			result("core", "https://p.example/core.json", "1.9.0", "2020-01-01T00:00:00Z", false, false, false),
			result("blog", "https://p.example/acme.json", "2.3.0", "2099-01-03T00:00:00Z", false, false, false),
			result("forms", "https://p.example/acme.json", "1.0.0", "2020-06-01T00:00:00Z", false, false, false),
		}},
		{"result-for-an-old-version-ignored", []string{components,
			result("blog", "https://p.example/acme.json", "2.2.0", "2099-01-03T00:00:00Z", true, true, true),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			for _, sql := range tc.sql {
				if _, err := b.db.Pool.Exec(context.Background(), sql); err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
			}
			sum, err := b.checker.Summary(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(sum, "", "  ")
			got = append(got, '\n')
			path := filepath.Join("testdata", "summary", tc.name+".golden.json")
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if string(got) != string(want) {
				t.Fatalf("summary:\n%s\nwant (%s):\n%s", got, path, want)
			}
		})
	}
}

func boolSQL(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// The summary is cached per instance, yet another instance's check shows
// within a second, and this instance's own check at once.
func TestSummaryCacheFollowsChecks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := newPublisher(t)
	b.standardSite(p)
	other := b.otherInstance()
	ctx := context.Background()
	for _, c := range []*Checker{b.checker, other} {
		if s, err := c.Summary(ctx); err != nil || s.UpdatesAvailable != 0 {
			t.Fatalf("before any check: %+v %v", s, err)
		}
	}
	res, err := other.RunLockedUpdateCheck(ctx, lease.Operator, "other")
	if err != nil || res.Status != Completed {
		t.Fatal(res, err)
	}
	committed := time.Now()
	if s, _ := other.Summary(ctx); s.UpdatesAvailable != 2 {
		t.Fatalf("the instance that ran the check still shows %+v", s)
	}
	for {
		s, err := b.checker.Summary(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.UpdatesAvailable == 2 {
			break
		}
		if time.Since(committed) > time.Second {
			t.Fatalf("another instance's summary still shows %+v a second after the check", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("the other instance saw the check %s after it committed", time.Since(committed).Round(time.Millisecond))
}

// A burst of requests costs one query: with the tables locked, fifty
// callers wait behind a single read.
func TestSummaryReadsOnceForABurst(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	blocker, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := blocker.Exec(ctx, "LOCK TABLE components IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if _, err := b.checker.Summary(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	deadline := time.Now().Add(5 * time.Second)
	var waiting int64
	for time.Now().Before(deadline) {
		b.db.Pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").Scan(&waiting)
		if waiting > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // let any further reads queue up too
	b.db.Pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").Scan(&waiting)
	blocker.Rollback(ctx)
	wg.Wait()
	if waiting != 1 {
		t.Fatalf("%d summary reads waited on the lock for 50 callers, want 1", waiting)
	}
}
