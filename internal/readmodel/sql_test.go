package readmodel_test

import (
	"context"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

// The Go rank of a severity is the SQL one (upcheck_severity_rank, which
// orders the summary) for every word a document or an OSV record may
// carry, in any case, unknown words and none included.
func TestSeverityRankMatchesSQL(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	for _, w := range []string{"critical", "high", "medium", "moderate", "low", "", "CRITICAL", "High", "Moderate", "MEDIUM",
		"none", "unknown", "informational", "important", "severe", " high", "low ", "modérée"} {
		var sql int
		db.QueryRow(t, "SELECT upcheck_severity_rank($1::text)", w).Scan(&sql)
		if got := readmodel.Severity(w).Rank(); got != sql {
			t.Errorf("severity %q: Go ranks %d, SQL %d", w, got, sql)
		}
	}
	var null int
	db.QueryRow(t, "SELECT upcheck_severity_rank(NULL)").Scan(&null)
	if null != readmodel.Severity("").Rank() {
		t.Errorf("no severity: SQL ranks %d, Go %d", null, readmodel.Severity("").Rank())
	}
	// The order itself: moderate with medium, above low.
	if m, l := readmodel.SeverityModerate.Rank(), readmodel.SeverityLow.Rank(); m != readmodel.SeverityMedium.Rank() || m <= l {
		t.Errorf("moderate ranks %d, medium %d, low %d", m, readmodel.SeverityMedium.Rank(), l)
	}
}

// Each threshold is the one the SQL judges by, checked at its boundary on
// the database clock: the stale age (upcheck_stale_age, upcheck_stale),
// the expiry warning (source_state.untrusted and Source health's
// expires_soon) and the cooldown (lease's production timings, which pass
// it to the lease statements).
func TestThresholdsMatchSQL(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	const margin = time.Minute

	var staleAge float64
	db.QueryRow(t, "SELECT extract(epoch FROM upcheck_stale_age())::float8").Scan(&staleAge)
	if staleAge != readmodel.StaleAge.Seconds() {
		t.Errorf("upcheck_stale_age() is %v s, readmodel.StaleAge %v", staleAge, readmodel.StaleAge)
	}
	for _, tc := range []struct {
		age   time.Duration
		stale bool
	}{{readmodel.StaleAge - margin, false}, {readmodel.StaleAge + margin, true}} {
		var stale bool
		db.QueryRow(t, `SELECT upcheck_stale('https://p.example/a.json', NULL, clock_timestamp() - make_interval(secs => $1), NULL)`,
			tc.age.Seconds()).Scan(&stale)
		if stale != tc.stale {
			t.Errorf("last success %v ago: upcheck_stale %v, want %v", tc.age, stale, tc.stale)
		}
	}

	for _, tc := range []struct {
		code, url string
		in        time.Duration
	}{
		{"inside", "https://p.example/inside.json", readmodel.ExpiryWarning - margin},
		{"outside", "https://p.example/outside.json", readmodel.ExpiryWarning + margin},
	} {
		db.MustExec(t, `INSERT INTO components (code, name, installed_version, source_url) VALUES ($1, $1, '1.0.0', $2)`, tc.code, tc.url)
		db.MustExec(t, `INSERT INTO sources (url, epoch, document, document_hash, last_success_at, last_attempt_at, expires_at)
			VALUES ($1, 1, 'doc', sha256('doc'), clock_timestamp(), clock_timestamp(), clock_timestamp() + make_interval(secs => $2))`,
			tc.url, tc.in.Seconds())
	}
	health, err := store.New(db.Pool).SourceHealth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(health) != 2 {
		t.Fatalf("%d sources in use, want 2", len(health))
	}
	for _, h := range health {
		want := h.URL == "https://p.example/inside.json"
		var untrusted bool
		db.QueryRow(t, "SELECT untrusted FROM source_state WHERE url = $1", h.URL).Scan(&untrusted)
		if untrusted != want || h.Untrusted != want || h.ExpiresSoon != want {
			t.Errorf("%s: source_state.untrusted %v, SourceHealth untrusted %v and expires soon %v; want %v (readmodel.ExpiryWarning %v)",
				h.URL, untrusted, h.Untrusted, h.ExpiresSoon, want, readmodel.ExpiryWarning)
		}
	}

	if got := lease.DefaultTimings().Cooldown; got != readmodel.ManualCooldown {
		t.Errorf("the lease's production cooldown is %v, readmodel.ManualCooldown %v", got, readmodel.ManualCooldown)
	}
}

// The thresholds in words, as the pages and app.js show them.
func TestDurationText(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		readmodel.StaleAge: "48 hours", readmodel.ExpiryWarning: "7 days", readmodel.ManualCooldown: "2 minutes",
		time.Minute: "1 minute", 90 * time.Second: "90 seconds", 2 * time.Second: "2 seconds", 500 * time.Millisecond: "500 milliseconds",
		24 * time.Hour: "24 hours", 72 * time.Hour: "3 days",
	} {
		if got := readmodel.DurationText(d); got != want {
			t.Errorf("DurationText(%v) = %q, want %q", d, got, want)
		}
	}
}

// The summary names the components that need action in the urgency order
// of readmodel.AttentionKinds (the CASE of queries/summary.sql), whatever
// their names and severities: the emails follow the same order.
func TestAttentionOrderMatchesSQL(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	const src = "https://p.example/acme.json"
	// Names sort against the urgency, and the advisory with no fix is the
	// mildest by severity.
	db.MustExec(t, `INSERT INTO components (code, name, installed_version, source_url) VALUES
		('core', 'Core', '1.9.0', $1), ('nofix', 'Zeta', '1.0.0', $1), ('sec', 'Mid', '1.0.0', $1), ('vuln', 'Alpha', '1.0.0', $1)`, src)
	db.MustExec(t, `INSERT INTO sources (url, epoch, document, document_hash, last_success_at, last_attempt_at)
		VALUES ($1, 1, 'doc', sha256('doc'), clock_timestamp(), clock_timestamp())`, src)
	for _, r := range []struct {
		code, security, advisories, ids, noFix string
	}{
		{"core", "false", `[]`, `{}`, `{}`},
		{"nofix", "false", `[{"id": "N-1", "severity": "low", "no_fix": true}]`, `{N-1}`, `{N-1}`},
		{"sec", "true", `[]`, `{}`, `{}`},
		{"vuln", "false", `[{"id": "V-1", "severity": "critical", "no_fix": false, "fixed_in": "1.1.0"}]`, `{V-1}`, `{}`},
	} {
		db.MustExec(t, `INSERT INTO component_results (code, source_url, installed_version, core_version, document_hash,
			update_available, security, advisories, advisory_ids, no_fix_ids, epoch)
			VALUES ($1, $2, (SELECT installed_version FROM components WHERE code = $1), '1.9.0', sha256('doc'),
			        $3::boolean, $3::boolean, $4::jsonb, $5::text[], $6::text[], 1)`, r.code, src, r.security, r.advisories, r.ids, r.noFix)
	}
	sum, err := store.New(db.Pool).Summary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, a := range sum.Attention {
		kinds = append(kinds, a.Kind)
	}
	if len(kinds) != len(readmodel.AttentionKinds) {
		t.Fatalf("attention %v, want one of each kind %v", kinds, readmodel.AttentionKinds)
	}
	for i, k := range kinds {
		if readmodel.Urgency(k) != i {
			t.Fatalf("the summary orders %v, readmodel.AttentionKinds %v", kinds, readmodel.AttentionKinds)
		}
	}
}
