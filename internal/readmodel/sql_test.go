package readmodel_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/treekit"
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

// The notification and retention thresholds are the ones their statements
// judge by, checked just inside and just outside each on the database
// clock: a source failing for SourceFailingNotice notifies
// (EventPlanSourceFailing), no check completed for CheckOverdue notifies
// (EventPlanOverdue), and a source unused for UnusedSourceKept is deleted
// (SourceDeleteUnused, in CleanUp).
func TestNoticeThresholdsMatchSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const margin = time.Minute
	for _, tc := range []struct {
		name      string
		threshold time.Duration
		// set puts the fact $1 seconds in the past; act runs the statement
		// and says whether it acted.
		set string
		act func(tx *store.Tx) (bool, error)
	}{
		{"source failing", readmodel.SourceFailingNotice,
			`UPDATE sources SET failing_since = clock_timestamp() - make_interval(secs => $1), consecutive_failures = 3, last_error = 'x'`,
			func(tx *store.Tx) (bool, error) {
				ids, err := tx.EventPlanSourceFailing(ctx, "https://p.example/a.json", 0)
				return len(ids) > 0, err
			}},
		{"check overdue", readmodel.CheckOverdue,
			`UPDATE core_update_lock SET last_completed_at = clock_timestamp() - make_interval(secs => $1)`,
			func(tx *store.Tx) (bool, error) {
				ids, err := tx.EventPlanOverdue(ctx)
				return len(ids) > 0, err
			}},
		{"unused source", readmodel.UnusedSourceKept,
			`UPDATE sources SET unused_since = clock_timestamp() - make_interval(secs => $1); DELETE FROM components`,
			func(tx *store.Tx) (bool, error) {
				_, deleted, err := tx.CleanUp(ctx, 1)
				return deleted > 0, err
			}},
	} {
		for _, age := range []time.Duration{tc.threshold - margin, tc.threshold + margin} {
			t.Run(fmt.Sprintf("%s %v", tc.name, age), func(t *testing.T) {
				t.Parallel()
				db := pgtest.New(t)
				db.MustExec(t, `INSERT INTO components (code, name, installed_version, source_url) VALUES ('a', 'A', '1.0.0', 'https://p.example/a.json')`)
				db.MustExec(t, `INSERT INTO sources (url, epoch, document, document_hash, last_success_at, last_attempt_at)
					VALUES ('https://p.example/a.json', 1, 'doc', sha256('doc'), clock_timestamp(), clock_timestamp())`)
				for _, stmt := range strings.Split(tc.set, "; ") {
					if strings.Contains(stmt, "$1") {
						db.MustExec(t, stmt, age.Seconds())
					} else {
						db.MustExec(t, stmt)
					}
				}
				st := store.New(db.Pool)
				var acted bool
				if err := st.WithTx(ctx, func(tx *store.Tx) error {
					if _, err := tx.ChannelCreate(ctx, store.NewChannel{Name: "all", Kind: "webhook", Target: "https://hooks.example/x", Events: "all"}); err != nil {
						return err
					}
					var err error
					acted, err = tc.act(tx)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				if want := age > tc.threshold; acted != want {
					t.Errorf("%v after the fact (threshold %v): acted %v, want %v", age, tc.threshold, acted, want)
				}
			})
		}
	}
}

// The thresholds in words, as the pages and app.js show them.

// One rule for an exact length, whatever it is the length of: a
// threshold, a soak, a cooldown or a lockout (each reads DurationText, and
// nothing else words one).
func TestDurationText(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		readmodel.StaleAge: "48 hours", readmodel.ExpiryWarning: "7 days", readmodel.ManualCooldown: "2 minutes",
		time.Minute: "1 minute", 90 * time.Second: "90 seconds", 2 * time.Second: "2 seconds", 500 * time.Millisecond: "500 milliseconds",
		24 * time.Hour: "24 hours", 72 * time.Hour: "3 days",
		// soaks
		time.Hour: "1 hour", 36 * time.Hour: "36 hours", 90 * time.Minute: "90 minutes",
		// lockouts
		15 * time.Minute: "15 minutes", 2 * time.Hour: "2 hours", time.Second: "1 second",
		1500 * time.Millisecond: "2 seconds", time.Millisecond: "1 millisecond", 0: "0 seconds",
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
		('core', 'Core', '1.9.0', $1), ('nofix', 'Zeta', '1.0.0', $1), ('sec', 'Mid', '1.0.0', $1), ('vuln', 'Alpha', '1.0.0', $1),
		('lost', 'Aardvark', '1.0.0', $1), ('old', 'Aaa', '1.0.0', $1), ('mal', 'Zzz', '1.0.0', $1), ('kev', 'Zy', '1.0.0', $1),
		('newpub', 'Aab', '1.0.0', $1), ('pin', 'Aa', '1.0.0', $1), ('brings', 'A', '1.0.0', $1)`, src)
	db.MustExec(t, `INSERT INTO sources (url, epoch, document, document_hash, last_success_at, last_attempt_at)
		VALUES ($1, 1, 'doc', sha256('doc'), clock_timestamp(), clock_timestamp())`, src)
	for _, r := range []struct {
		code, security, advisories, ids, noFix string
	}{
		{"core", "false", `[]`, `{}`, `{}`},
		{"nofix", "false", `[{"id": "N-1", "severity": "low", "no_fix": true}]`, `{N-1}`, `{N-1}`},
		{"sec", "true", `[]`, `{}`, `{}`},
		{"vuln", "false", `[{"id": "V-1", "severity": "critical", "no_fix": false, "fixed_in": "1.1.0"}]`, `{V-1}`, `{}`},
		{"lost", "false", `[]`, `{}`, `{}`},
		{"old", "false", `[]`, `{}`, `{}`},
		{"mal", "false", `[{"id": "MAL-1", "severity": "low", "no_fix": true, "malicious": true}]`, `{MAL-1}`, `{MAL-1}`},
		{"kev", "false", `[{"id": "K-1", "severity": "low", "no_fix": false, "fixed_in": "1.1.0", "known_exploited": true}]`, `{K-1}`, `{}`},
		{"newpub", "false", `[]`, `{}`, `{}`},
		{"pin", "false", `[]`, `{}`, `{}`},
		{"brings", "false", `[]`, `{}`, `{}`},
	} {
		db.MustExec(t, `INSERT INTO component_results (code, source_url, installed_version, core_version, document_hash,
			update_available, security, advisories, advisory_ids, no_fix_ids, epoch)
			VALUES ($1, $2, (SELECT installed_version FROM components WHERE code = $1), '1.9.0', sha256('doc'),
			        $3::boolean, $3::boolean, $4::jsonb, $5::text[], $6::text[], 1)`, r.code, src, r.security, r.advisories, r.ids, r.noFix)
	}
	db.MustExec(t, `UPDATE component_results SET provenance_lost = '1.1.0' WHERE code = 'lost'`)
	db.MustExec(t, `UPDATE component_results SET deprecated = 'use something else' WHERE code = 'old'`)
	db.MustExec(t, `UPDATE component_results SET malicious_ids = '{MAL-1}' WHERE code = 'mal'`)
	db.MustExec(t, `UPDATE component_results SET exploited_ids = '{K-1}' WHERE code = 'kev'`)
	db.MustExec(t, `UPDATE component_results SET new_publisher_version = '1.1.0', new_publisher = 'mallory' WHERE code = 'newpub'`)
	db.MustExec(t, `INSERT INTO pin_downgrades (code, source_url, pin, reason) VALUES ('pin', $1, '', 'the manifest pins no key any more')`, src)
	db.MustExec(t, `UPDATE component_results SET update_available = true, update_version = '1.1.0', latest_version = '1.1.0',
		registry_facts = '{"brings": [{"kind": "burst", "args": {"version": "1.1.0", "count": 7, "window_minutes": 60}}]}' WHERE code = 'brings'`)
	// The summary names five, in the order of AttentionKinds; the most
	// urgent is taken away, and the next read names the next kind first,
	// until none is left: every kind in its place.
	var order []readmodel.AttentionKind
	for range readmodel.AttentionKinds {
		sum, err := store.New(db.Pool).Summary(context.Background(), store.LocalSite, readmodel.DevSeparate)
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.Attention) == 0 {
			break
		}
		for i := 1; i < len(sum.Attention); i++ {
			if readmodel.Urgency(sum.Attention[i-1].Kind) > readmodel.Urgency(sum.Attention[i].Kind) {
				t.Fatalf("the summary names %s before %s, readmodel.AttentionKinds %v",
					sum.Attention[i-1].Kind, sum.Attention[i].Kind, readmodel.AttentionKinds)
			}
		}
		first := sum.Attention[0]
		order = append(order, first.Kind)
		db.MustExec(t, `DELETE FROM component_results WHERE code = $1`, first.Code)
		db.MustExec(t, `DELETE FROM pin_downgrades WHERE code = $1`, first.Code)
	}
	if !slices.Equal(order, readmodel.AttentionKinds) {
		t.Fatalf("the summary orders %v, readmodel.AttentionKinds %v", order, readmodel.AttentionKinds)
	}
}

// Among the offered updates that bring a signal, the summary names first
// the one whose most pressing signal ranks highest (readmodel.SignalRank,
// upcheck_signal_rank): a new install script or an exotic source above a
// young dependency, whatever their names; an update not offered (its
// signals stored, the policy holding it) needs no attention for them.
func TestAttentionRanksWhatAnUpdateBrings(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	const src = "https://p.example/acme.json"
	db.MustExec(t, `INSERT INTO components (code, name, installed_version, source_url) VALUES
		('core', 'Core', '1.9.0', $1), ('young', 'Aaa', '1.0.0', $1), ('exotic', 'Mmm', '1.0.0', $1),
		('script', 'Zzz', '1.0.0', $1), ('held', 'A', '1.0.0', $1)`, src)
	db.MustExec(t, `INSERT INTO sources (url, epoch, document, document_hash, last_success_at, last_attempt_at)
		VALUES ($1, 1, 'doc', sha256('doc'), clock_timestamp(), clock_timestamp())`, src)
	for _, r := range []struct{ code, offered, brings string }{
		{"core", "false", `null`},
		{"young", "true", `[{"kind": "young_dependency", "args": {"version": "1.1.0", "name": "plain-crypto"}}]`},
		{"exotic", "true", `[{"kind": "exotic_source", "args": {"version": "1.1.0", "name": "setup"}}, {"kind": "burst", "args": {"version": "1.1.0"}}]`},
		{"script", "true", `[{"kind": "install_script", "args": {"version": "1.1.0", "name": "postinstall"}}]`},
		{"held", "false", `[{"kind": "install_script", "args": {"version": "1.1.0", "name": "postinstall"}}]`},
	} {
		db.MustExec(t, `INSERT INTO component_results (code, source_url, installed_version, core_version, document_hash,
			update_available, update_version, latest_version, registry_facts, epoch)
			VALUES ($1, $2, (SELECT installed_version FROM components WHERE code = $1), '1.9.0', sha256('doc'),
			        $3::boolean, '1.1.0', '1.1.0', jsonb_build_object('brings', $4::jsonb), 1)`, r.code, src, r.offered, r.brings)
	}
	sum, err := store.New(db.Pool).Summary(context.Background(), store.LocalSite, readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range sum.Attention {
		if a.Kind != readmodel.KindBrings || a.Brings == nil {
			t.Errorf("%s: kind %s, brings %v", a.Code, a.Kind, a.Brings)
			continue
		}
		got = append(got, a.Code+":"+string(a.Brings.Kind))
	}
	want := []string{"script:install_script", "exotic:exotic_source", "young:young_dependency"}
	if !slices.Equal(got, want) || sum.AttentionTotal != 3 {
		t.Errorf("the summary names %v (of %d), want %v", got, sum.AttentionTotal, want)
	}
}

// sqlLiterals are the quoted literals of a piece of SQL, as PostgreSQL
// prints a definition ('running'::text).
func sqlLiterals(def string) []string {
	var out []string
	// A comment's apostrophe ("the channel's") is no quote.
	def = regexp.MustCompile(`--[^\n]*`).ReplaceAllString(def, "")
	for _, m := range regexp.MustCompile(`'((?:[^']|'')*)'`).FindAllStringSubmatch(def, -1) {
		out = append(out, strings.ReplaceAll(m[1], "''", "'"))
	}
	return out
}

// checkAllows is what the CHECK constraint on column of table allows, as
// the database holds it (pg_constraint), whatever migration created it.
func checkAllows(t *testing.T, db *pgtest.DB, table, column string) []string {
	t.Helper()
	var def string
	db.QueryRow(t, `SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c
		JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
		WHERE c.conrelid = $1::regclass AND c.contype = 'c' AND a.attname = $2 AND cardinality(c.conkey) = 1`,
		table, column).Scan(&def)
	return sqlLiterals(def)
}

// sameSet fails the test when Go's values and SQL's differ in either
// direction.
func sameSet[T ~string](t *testing.T, what string, goValues []T, sqlValues []string) {
	t.Helper()
	var gs []string
	for _, v := range goValues {
		gs = append(gs, string(v))
	}
	g, s := slices.Sorted(slices.Values(gs)), slices.Sorted(slices.Values(sqlValues))
	s = slices.Compact(s)
	for _, v := range g {
		if !slices.Contains(s, v) {
			t.Errorf("%s: Go has %q, SQL does not (SQL: %v)", what, v, s)
		}
	}
	for _, v := range s {
		if !slices.Contains(g, v) {
			t.Errorf("%s: SQL has %q, Go does not (Go: %v)", what, v, g)
		}
	}
}

// Every vocabulary of readmodel is its SQL twin's, in both directions: the
// values a CHECK constraint allows, and the values the views and the
// queries produce or judge by. A value added on one side only fails here.
func TestVocabulariesMatchSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("check status", func(t *testing.T) {
		t.Parallel()
		db := pgtest.New(t)
		sameSet(t, "check_runs.status", readmodel.AllCheckStatuses(), checkAllows(t, db, "check_runs", "status"))

		// The summary's last check passes over refused and running checks
		// and over imports (queries/summary.sql); every other status and
		// trigger counts.
		st := store.New(db.Pool)
		for _, s := range readmodel.AllCheckStatuses() {
			for _, tr := range readmodel.AllTriggers() {
				db.MustExec(t, `INSERT INTO check_runs (trigger, actor, status, finished_at) VALUES ('scheduled', 'cron', 'completed', clock_timestamp())`)
				db.MustExec(t, `INSERT INTO check_runs (trigger, actor, status, finished_at) VALUES ($1, 'cron', $2, clock_timestamp())`, tr, s)
				sum, err := st.Summary(ctx, store.LocalSite, readmodel.DevSeparate)
				if err != nil {
					t.Fatal(err)
				}
				want := readmodel.CheckStatus(readmodel.CheckCompleted)
				if !s.Refused() && s != readmodel.CheckRunning && tr != readmodel.TriggerImport {
					want = s
				}
				if sum.LastCheck == nil || readmodel.CheckStatus(sum.LastCheck.Status) != want {
					t.Errorf("a %s check ending %s: the summary's last check is %+v, want %s", tr, s, sum.LastCheck, want)
				}
			}
		}

		// The history shows the stored statuses, abandoned for a run whose
		// lease is gone, and refused for a refused import: ShownRunStatuses.
		db.MustExec(t, `INSERT INTO check_runs (trigger, actor, owner, status) VALUES ('scheduled', 'cron', gen_random_uuid(), 'running')`)
		db.MustExec(t, `INSERT INTO check_runs (trigger, actor, status, finished_at) VALUES ('import', 'cli', 'completed_with_failures', clock_timestamp())`)
		runs, err := st.Runs(ctx, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var shown []string
		for _, r := range runs {
			shown = append(shown, readmodel.ShownRunStatus(r.Status, r.Trigger))
		}
		for _, s := range []readmodel.CheckStatus{readmodel.StatusAbandoned, readmodel.StatusRefused} {
			if !slices.Contains(shown, string(s)) {
				t.Errorf("the history shows %v, never %s", shown, s)
			}
		}
		for _, s := range shown {
			if !slices.Contains(readmodel.ShownRunStatuses(), readmodel.CheckStatus(s)) {
				t.Errorf("the history shows %q, which readmodel.ShownRunStatuses does not name", s)
			}
		}
	})

	t.Run("trust state", func(t *testing.T) {
		t.Parallel()
		db := pgtest.New(t)
		sameSet(t, "sources.signature_state", readmodel.AllTrustStates(), checkAllows(t, db, "sources", "signature_state"))
		// A source in use with no row yet reads as unsigned.
		db.MustExec(t, `INSERT INTO components (code, name, installed_version, source_url) VALUES ('a', 'A', '1.0.0', 'https://p.example/a.json')`)
		var state string
		db.QueryRow(t, `SELECT signature_state FROM source_state WHERE url = 'https://p.example/a.json'`).Scan(&state)
		if readmodel.TrustState(state) != readmodel.TrustUnsigned {
			t.Errorf("a source never read: source_state.signature_state %q, want %q", state, readmodel.TrustUnsigned)
		}
	})

	t.Run("channel and delivery", func(t *testing.T) {
		t.Parallel()
		db := pgtest.New(t)
		sameSet(t, "notification_channels.kind", readmodel.AllChannelKinds(), checkAllows(t, db, "notification_channels", "kind"))
		sameSet(t, "notification_channels.events", readmodel.AllChannelEvents(), checkAllows(t, db, "notification_channels", "events"))
		sameSet(t, "notification_channels.scope", readmodel.AllChannelScopes(), checkAllows(t, db, "notification_channels", "scope"))
		sameSet(t, "notification_events.state", readmodel.AllDeliveryStates(), checkAllows(t, db, "notification_events", "state"))
		sameSet(t, "notification_messages.state", readmodel.AllDeliveryStates(), checkAllows(t, db, "notification_messages", "state"))
	})

	t.Run("source kind", func(t *testing.T) {
		t.Parallel()
		db := pgtest.New(t)
		for i, url := range []string{"https://p.example/a.json", "http://p.example/b.json", readmodel.OfflinePrefix + "acme", "offline-not:x"} {
			db.MustExec(t, `INSERT INTO components (code, name, installed_version, source_url) VALUES ($1, $1, '1.0.0', $2)`, fmt.Sprint("c", i), url)
			var offline bool
			db.QueryRow(t, `SELECT offline FROM source_state WHERE url = $1`, url).Scan(&offline)
			if got := readmodel.SourceKindOf(url); (got == readmodel.SourceOffline) != offline {
				t.Errorf("%s: Go's kind %s, source_state.offline %v", url, got, offline)
			}
		}
	})

	t.Run("failure kind", func(t *testing.T) {
		t.Parallel()
		db := pgtest.New(t)
		// The kinds site_source_state (source_state's definition) judges
		// by are kinds.
		var def string
		db.QueryRow(t, `SELECT pg_get_viewdef('site_source_state'::regclass)`).Scan(&def)
		m := regexp.MustCompile(`last_error_kind = ANY \(ARRAY\[([^\]]*)\]`).FindStringSubmatch(def)
		if m == nil {
			t.Fatalf("site_source_state no longer judges last_error_kind against a list: say here what judges the trust of a failure\n%s", def)
		}
		judged := sqlLiterals(m[1])
		var distrusting []readmodel.ErrorKind
		for _, k := range readmodel.AllErrorKinds() {
			if k.Distrusts() {
				distrusting = append(distrusting, k)
			}
		}
		sameSet(t, "the failure kinds source_state.untrusted counts", distrusting, judged)
		// And each stored kind makes a source untrusted exactly when Go
		// says it distrusts.
		for i, k := range readmodel.AllErrorKinds() {
			if k == readmodel.ErrorEvaluation {
				continue // a component's fact, never stored in sources
			}
			url := fmt.Sprintf("https://p.example/%d.json", i)
			db.MustExec(t, `INSERT INTO components (code, name, installed_version, source_url) VALUES ($1, $1, '1.0.0', $2)`, fmt.Sprint("c", i), url)
			db.MustExec(t, `INSERT INTO sources (url, epoch, last_attempt_at, last_error, last_error_at, last_error_kind, consecutive_failures, failing_since)
				VALUES ($1, 1, clock_timestamp(), 'boom', clock_timestamp(), $2, 1, clock_timestamp())`, url, k)
			var untrusted bool
			db.QueryRow(t, `SELECT untrusted FROM source_state WHERE url = $1`, url).Scan(&untrusted)
			if untrusted != k.Distrusts() {
				t.Errorf("a source failing with %s: source_state.untrusted %v, readmodel %v", k, untrusted, k.Distrusts())
			}
		}
	})

	t.Run("audit", func(t *testing.T) {
		t.Parallel()
		db := pgtest.New(t)
		st := store.New(db.Pool)
		for _, a := range readmodel.AllAuditActions() {
			switch a {
			case readmodel.AuditCheck:
				db.MustExec(t, `INSERT INTO check_runs (trigger, actor, status, finished_at) VALUES ('manual', 'ops@example.org', 'completed', clock_timestamp())`)
			case readmodel.AuditAdvisoryExpire:
				db.MustExec(t, `INSERT INTO advisory_dismissals (component_code, advisory_id, user_email, reason, dismissed_at, expires_at)
					VALUES ('blog', 'A-1', 'ops@example.org', 'accepted', clock_timestamp() - interval '2 hours', clock_timestamp() - interval '1 hour')`)
			default:
				if err := st.AuditAppend(ctx, 0, a, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		events, err := st.AuditEvents(ctx, "", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var actions, kinds []string
		for _, e := range events {
			actions, kinds = append(actions, e.Action), append(kinds, e.Kind)
			if want := auditKindOf[readmodel.AuditAction(e.Action)]; readmodel.AuditKind(e.Kind) != want {
				t.Errorf("action %s: SQL's kind %q, want %q", e.Action, e.Kind, want)
			}
		}
		sameSet(t, "the audit log's actions", readmodel.AllAuditActions(), actions)
		sameSet(t, "the audit log's kinds", readmodel.AllAuditKinds(), kinds)
		for _, k := range readmodel.AllAuditKinds() {
			n, err := st.AuditEventCount(ctx, string(k))
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Errorf("the filter %s finds nothing", k)
			}
		}
	})

	t.Run("event type", func(t *testing.T) {
		t.Parallel()
		db := pgtest.New(t)
		st := store.New(db.Pool)
		const src = "https://p.example/acme.json"
		db.MustExec(t, `INSERT INTO components (code, name, installed_version, source_url) VALUES
			('core', 'Core', '1.9.0', $1), ('nofix', 'Nofix', '1.0.0', $1), ('sec', 'Sec', '1.0.0', $1),
			('mal', 'Mal', '1.0.0', $1), ('kev', 'Kev', '1.0.0', $1)`, src)
		db.MustExec(t, `INSERT INTO sources (url, epoch, document, document_hash, last_success_at, last_attempt_at,
			last_error, last_error_at, consecutive_failures, failing_since)
			VALUES ($1, 1, 'doc', sha256('doc'), clock_timestamp() - interval '3 days', clock_timestamp(),
			        'boom', clock_timestamp(), 9, clock_timestamp() - interval '2 days')`, src)
		for _, r := range []struct{ code, update, security, version, advisories, ids, noFix string }{
			{"core", "false", "false", "", `[]`, `{}`, `{}`},
			{"nofix", "false", "false", "", `[{"id": "N-1", "severity": "low", "no_fix": true}]`, `{N-1}`, `{N-1}`},
			{"sec", "true", "true", "1.1.0", `[]`, `{}`, `{}`},
			{"mal", "false", "false", "", `[{"id": "MAL-1", "severity": "critical", "no_fix": true, "malicious": true}]`, `{MAL-1}`, `{MAL-1}`},
			{"kev", "false", "false", "", `[{"id": "K-1", "severity": "high", "no_fix": true, "known_exploited": true}]`, `{K-1}`, `{K-1}`},
		} {
			db.MustExec(t, `INSERT INTO component_results (code, source_url, installed_version, core_version, document_hash,
				update_available, security, update_version, security_version, evaluation, advisories, advisory_ids, no_fix_ids, epoch)
				VALUES ($1, $2, (SELECT installed_version FROM components WHERE code = $1), '1.9.0', sha256('doc'),
				        $3::boolean, $4::boolean, nullif($5, ''), nullif($5, ''),
				        jsonb_build_object('security_release', jsonb_build_object('version', $5, 'severity', 'high')),
				        $6::jsonb, $7::text[], $8::text[], 1)`, r.code, src, r.update, r.security, r.version, r.advisories, r.ids, r.noFix)
		}
		db.MustExec(t, `UPDATE component_results SET deprecated = 'gone', provenance_lost = '1.1.0' WHERE code = 'nofix'`)
		db.MustExec(t, `UPDATE component_results SET malicious_ids = '{MAL-1}' WHERE code = 'mal'`)
		db.MustExec(t, `UPDATE component_results SET exploited_ids = '{K-1}' WHERE code = 'kev'`)
		// The last check completed three days ago: overdue.
		db.MustExec(t, `UPDATE core_update_lock SET last_completed_at = clock_timestamp() - interval '3 days' WHERE name = $1`, lease.Name)
		// A look-back finding (tree.exposed): debug 4.4.2 installed by
		// one sync, removed by the next (treekit: as the lockfile sync
		// and the evaluation write them).
		treekit.Write(t, st, "package-lock.json", treekit.Tree(t, "node_modules/debug 4.4.2"), nil)
		treekit.Write(t, st, "package-lock.json", treekit.Tree(t, "node_modules/chalk 5.6.1"), nil)
		past, err := st.TreePastVersions(ctx)
		if err != nil || len(past) != 1 {
			t.Fatalf("the history: %+v, %v", past, err)
		}
		mal := func(id string) release.AdvisoryMatch {
			return release.AdvisoryMatch{Advisory: release.Advisory{ID: id, Severity: "critical", Affected: "*"}, NoFix: true, Malicious: true}
		}
		added := treekit.WriteFindings(t, st, []store.TreeFinding{treekit.Finding(t, "chalk", "5.6.1", mal("MAL-3"), false)},
			[]store.TreeExposure{{IntervalID: past[0].IntervalID, Site: past[0].Site, Name: "debug", Version: "4.4.2", AdvisoryID: "MAL-2",
				Advisory: []byte(`{"id": "MAL-2"}`), Malicious: true, InstalledAt: past[0].InstalledAt, RemovedAt: past[0].RemovedAt}})
		exposure := added[0].ID
		// A new tree finding (tree.finding): the evaluation writes it and
		// plans its event in one transaction, the finding stamped after
		// that transaction began; here the event is planned in the
		// transaction below, so the finding's stamp is moved past its
		// start.
		db.MustExec(t, `UPDATE tree_findings SET found_at = clock_timestamp() + interval '1 hour'`)
		var channel int64
		if err := st.WithTx(ctx, func(tx *store.Tx) error {
			var err error
			if channel, err = tx.ChannelCreate(ctx, store.NewChannel{Name: "all", Kind: "webhook", Target: "https://hooks.example/x", Events: "all"}); err != nil {
				return err
			}
			if _, err = tx.EventPlan(ctx, store.LocalSite, nil, 0, 0); err != nil {
				return err
			}
			if _, err = tx.EventPlanSourceFailing(ctx, src, 0); err != nil {
				return err
			}
			if _, err = tx.EventPlanOverdue(ctx); err != nil {
				return err
			}
			if err = tx.RegistryKeysSave(ctx, "https://registry.example/", []byte(`{"keys":[]}`), []string{"SHA256:a"}, 1); err != nil {
				return err
			}
			if err = tx.RegistryKeysSave(ctx, "https://registry.example/", []byte(`{"keys":[]}`), []string{"SHA256:b"}, 1); err != nil {
				return err
			}
			if _, err = tx.EventPlanRegistryKeys(ctx, "https://registry.example/", []string{"SHA256:a"}, 0); err != nil {
				return err
			}
			if _, err = tx.EventCreateTest(ctx, channel); err != nil {
				return err
			}
			if _, err = tx.EventPlanTreeFindings(ctx, store.LocalSite, readmodel.DevSeparate, 0); err != nil {
				return err
			}
			// The fleet's digest (fleet.finding), for a channel of the
			// fleet.
			if _, err = tx.ChannelCreate(ctx, store.NewChannel{Name: "fleet", Kind: "webhook", Target: "https://hooks.example/f", Events: "all",
				Scope: readmodel.ScopeFleet}); err != nil {
				return err
			}
			if _, err = tx.EventPlanFleetFindings(ctx, nil, readmodel.DevSeparate, 0); err != nil {
				return err
			}
			_, err = tx.EventPlanTreeExposed(ctx, []int64{exposure}, 0)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		events, err := st.Events(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, e := range events {
			types = append(types, e.Type)
		}
		sameSet(t, "the event types the queries queue", readmodel.AllEventTypes(), types)
		// The functions that judge events by their keys ("type:subject")
		// name types that exist.
		var defs string
		db.QueryRow(t, `SELECT coalesce(string_agg(pg_get_functiondef(p.oid), E'\n'), '') FROM pg_proc p
			JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = current_schema() AND p.prokind = 'f'`).Scan(&defs)
		keyed := 0
		for _, l := range sqlLiterals(defs) {
			if typ, ok := strings.CutSuffix(l, ":"); ok && strings.Contains(typ, ".") {
				keyed++
				if !slices.Contains(readmodel.AllEventTypes(), readmodel.EventType(typ)) {
					t.Errorf("a function keys events of type %q, which readmodel.AllEventTypes does not name", typ)
				}
			}
		}
		if keyed == 0 {
			t.Error("no function keys an event by its type: say here what judges the keys")
		}
	})
}

// auditKindOf is the kind the audit log files each action under.
var auditKindOf = map[readmodel.AuditAction]readmodel.AuditKind{
	readmodel.AuditUserSites: readmodel.AuditKindAccount, readmodel.AuditSiteAdd: readmodel.AuditKindOther,
	readmodel.AuditSiteRotate: readmodel.AuditKindOther, readmodel.AuditSiteRemove: readmodel.AuditKindOther,
	readmodel.AuditSitePush: readmodel.AuditKindOther, readmodel.AuditSitePolicy: readmodel.AuditKindOther,
	readmodel.AuditAdvisoryDismiss: readmodel.AuditKindDismissal, readmodel.AuditAdvisoryUndismiss: readmodel.AuditKindDismissal,
	readmodel.AuditAdvisoryExpire: readmodel.AuditKindDismissal, readmodel.AuditCheck: readmodel.AuditKindCheck,
	readmodel.AuditUserCreate: readmodel.AuditKindAccount, readmodel.AuditUserPassword: readmodel.AuditKindAccount,
	readmodel.AuditUserLockout: readmodel.AuditKindAccount, readmodel.AuditTokenCreate: readmodel.AuditKindAccount,
	readmodel.AuditRegistryKeysPin: readmodel.AuditKindTrust, readmodel.AuditRegistryKeysChange: readmodel.AuditKindTrust,
	readmodel.AuditTokenRevoke: readmodel.AuditKindAccount, readmodel.AuditSourceTrust: readmodel.AuditKindTrust,
	readmodel.AuditSourcePin: readmodel.AuditKindTrust, readmodel.AuditChannelAdd: readmodel.AuditKindOther,
	readmodel.AuditChannelRemove: readmodel.AuditKindOther, readmodel.AuditChannelEnable: readmodel.AuditKindOther,
	readmodel.AuditChannelDisable: readmodel.AuditKindOther, readmodel.AuditChannelTest: readmodel.AuditKindOther,
	readmodel.AuditComponentSkip: readmodel.AuditKindDismissal, readmodel.AuditComponentUnskip: readmodel.AuditKindDismissal,
	readmodel.AuditComponentApprove: readmodel.AuditKindDismissal, readmodel.AuditComponentUnapprove: readmodel.AuditKindDismissal,
	readmodel.AuditSourceDowngrade: readmodel.AuditKindTrust, readmodel.AuditTreeExposed: readmodel.AuditKindOther,
}

// The inputs a refusal may name are input_refusals.input's check: every
// Input is stored, read back as itself, accepted again, and a word that is
// no Input is refused by the table.
func TestInputsMatchSQL(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	st := store.New(db.Pool)
	ctx := context.Background()
	for _, in := range readmodel.Inputs {
		if err := st.InputRefused(ctx, in, "/site/"+string(in), "refused"); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
	}
	got, err := st.InputRefusals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var inputs []readmodel.Input
	for _, r := range got {
		inputs = append(inputs, r.Input)
	}
	if !slices.Equal(inputs, readmodel.Inputs) {
		t.Errorf("stored refusals %v, want every input %v in its order", inputs, readmodel.Inputs)
	}
	for _, in := range readmodel.Inputs {
		if cleared, err := st.InputAccepted(ctx, in); err != nil || !cleared {
			t.Errorf("%s accepted: cleared %v, %v", in, cleared, err)
		}
	}
	if err := st.InputRefused(ctx, readmodel.Input("composer"), "/site/composer.lock", "refused"); err == nil {
		t.Error("a refusal of an input that is no Input was stored")
	}
}

// The catalog's ranks are upcheck_catalog_rank's, every one of them: over
// every combination of its flags (with and without a source) the function
// gives each rank from CatalogRankMin to CatalogRankMax and nothing else,
// so the API's cursor, which accepts that range, takes every row's rank.
func TestCatalogRanksMatchSQL(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	var ranks []int32
	db.QueryRow(t, `SELECT array_agg(DISTINCT upcheck_catalog_rank(m, k, s, v, u, CASE WHEN src THEN 'https://p.example/a.json' END, f, st, e))
		FROM unnest('{false,true}'::boolean[]) m, unnest('{false,true}'::boolean[]) k, unnest('{false,true}'::boolean[]) s,
		     unnest('{false,true}'::boolean[]) v, unnest('{false,true}'::boolean[]) u, unnest('{false,true}'::boolean[]) src,
		     unnest('{false,true}'::boolean[]) f, unnest('{false,true}'::boolean[]) st, unnest('{false,true}'::boolean[]) e`).Scan(&ranks)
	slices.Sort(ranks)
	var want []int32
	for r := readmodel.CatalogRankMin; r <= readmodel.CatalogRankMax; r++ {
		want = append(want, int32(r))
	}
	if !slices.Equal(ranks, want) {
		t.Errorf("upcheck_catalog_rank gives %v; readmodel's catalog ranks are %v", ranks, want)
	}
	for _, r := range []int{readmodel.CatalogRankMin - 1, readmodel.CatalogRankMax + 1} {
		if readmodel.IsCatalogRank(r) {
			t.Errorf("IsCatalogRank(%d) is true outside the SQL range", r)
		}
	}
	// Each named rank is the function's for the flags it names.
	const src = "'https://p.example/a.json'"
	for args, want := range map[string]int{ // malicious, known_exploited, security, vulnerable, update_available, source_url, failing, stale, evaluated
		"true, true, true, true, true, " + src + ", false, false, true":       readmodel.RankMalicious,
		"false, true, false, true, true, " + src + ", false, false, true":     readmodel.RankKnownExploited,
		"false, false, true, false, true, " + src + ", false, false, true":    readmodel.RankSecurity,
		"false, false, false, true, false, " + src + ", false, false, true":   readmodel.RankSecurity,
		"false, false, false, false, true, " + src + ", false, false, true":   readmodel.RankUpdate,
		"false, false, false, false, false, " + src + ", true, false, true":   readmodel.RankUnknown,
		"false, false, false, false, false, " + src + ", false, false, false": readmodel.RankUnknown,
		"false, false, false, false, false, " + src + ", false, false, true":  readmodel.RankUpToDate,
		"false, false, false, false, false, NULL, false, false, false":        readmodel.RankNoSource,
	} {
		var got int
		db.QueryRow(t, `SELECT upcheck_catalog_rank(`+args+`)`).Scan(&got)
		if got != want {
			t.Errorf("upcheck_catalog_rank(%s) = %d, readmodel says %d", args, got, want)
		}
	}
}

// Each filter's Go predicate (Filter.Shows over the catalog's rows) shows
// as many components as the summary's SQL counts for it
// (Filter.SummaryCount, the dashboard's figure that links to the filter),
// over components that each raise one flag; and each such filter shows one
// at least, so that no agreement is the agreement of two zeros.
func TestFiltersMatchSQL(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	const src, old = "https://p.example/a.json", "https://p.example/old.json"
	db.MustExec(t, `INSERT INTO feeds (kind, url, epoch, last_success_at) VALUES ('osv', 'https://feeds.example/all.zip', 1, clock_timestamp()),
		('kev', 'https://feeds.example/kev.json', 1, clock_timestamp())`)
	db.MustExec(t, `INSERT INTO sources (url, epoch, document, document_hash, last_success_at, last_attempt_at) VALUES
		($1, 1, 'doc', sha256('doc'), clock_timestamp(), clock_timestamp()),
		($2, 1, 'doc', sha256('doc'), clock_timestamp() - make_interval(secs => $3), clock_timestamp())`,
		src, old, (readmodel.StaleAge + time.Hour).Seconds())
	for _, r := range []struct{ code, url, set string }{
		{"core", src, ""},
		{"upd", src, "update_available = true, update_version = '1.1.0'"},
		{"sec", src, "update_available = true, security = true, update_version = '1.1.0', security_version = '1.1.0'"},
		{"vul", src, `advisories = '[{"id": "V-1", "fixed_in": "1.1.0"}]', advisory_ids = '{V-1}'`},
		{"mal", src, `advisories = '[{"id": "MAL-1", "no_fix": true, "malicious": true}]', advisory_ids = '{MAL-1}', no_fix_ids = '{MAL-1}', malicious_ids = '{MAL-1}'`},
		{"kev", src, `advisories = '[{"id": "K-1", "fixed_in": "1.1.0", "known_exploited": true}]', advisory_ids = '{K-1}', exploited_ids = '{K-1}'`},
		{"wait", src, "waiting_version = '2.0.0'"},
		{"dep", src, "deprecated = 'use another'"},
		{"old", old, ""},
	} {
		db.MustExec(t, `INSERT INTO components (code, name, installed_version, source_url) VALUES ($1, $1, '1.0.0', $2)`, r.code, r.url)
		db.MustExec(t, `INSERT INTO component_results (code, source_url, installed_version, core_version, document_hash, epoch)
			VALUES ($1, $2, '1.0.0', '1.0.0', sha256('doc'), 1)`, r.code, r.url)
		if r.set != "" {
			db.MustExec(t, `UPDATE component_results SET `+r.set+` WHERE code = $1`, r.code)
		}
	}
	st := store.New(db.Pool)
	sum, err := st.Summary(ctx, store.LocalSite, readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := st.CatalogRows(ctx, readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	counted := 0
	for _, f := range readmodel.CatalogFilters {
		want, ok := f.SummaryCount(&sum)
		if !ok {
			continue
		}
		counted++
		var shown []string
		for i := range rows {
			if f.Shows(&rows[i].CatalogRow) {
				shown = append(shown, rows[i].Code)
			}
		}
		if len(shown) != want || want == 0 {
			t.Errorf("filter %q shows %d components %v, the summary's SQL counts %d", f, len(shown), shown, want)
		}
	}
	if counted < 8 {
		t.Errorf("only %d filters have a count in the summary", counted)
	}
}
