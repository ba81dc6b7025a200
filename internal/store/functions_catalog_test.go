package store_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// acme1 is ACME-1 as blog's result lists it, and as it was dismissed.
const acme1 = `{"id": "ACME-1", "severity": "medium", "affected": "<2.4.0", "summary": "XSS", "no_fix": true}`

// The search keys of a result: every advisory's id and aliases,
// upper-cased, once each, sorted; nothing from what is not an array. The
// generated column holds the same.
func testAdvisoryKeys(t *testing.T, f *fdb) {
	for advisories, want := range map[string][]string{
		`NULL`:                     {},
		`'{}'`:                     {},
		`'[]'`:                     {},
		`'"GHSA-x"'`:               {},
		`'[{"summary": "no id"}]'`: {},
		`'[{"id": "ghsa-jfh8-c2jp-5v3q", "aliases": ["cve-2021-44228", "CVE-2021-44228"]}, {"id": "ACME-1"}]'`: {"ACME-1", "CVE-2021-44228", "GHSA-JFH8-C2JP-5V3Q"},
		`'[{"id": "ACME-2", "aliases": "CVE-1"}, {"aliases": ["cve-2"]}]'`:                                     {"ACME-2", "CVE-2"},
	} {
		var got []string
		f.QueryRow(t, `SELECT upcheck_advisory_keys(`+advisories+`::jsonb)`).Scan(&got)
		if !slices.Equal(got, want) {
			t.Errorf("upcheck_advisory_keys(%s) = %q, want %q", advisories, got, want)
		}
	}
	f.exec(t, `INSERT INTO component_results (code, source_url, installed_version, core_version, document_hash, epoch, advisories)
		VALUES ('blog', 'https://p.example/a.json', '2.3.0', '1.0.0', sha256('doc'), 1, '[{"id": "acme-1", "aliases": ["cve-9"]}]')`)
	var stored []string
	f.QueryRow(t, `SELECT advisory_keys FROM component_results`).Scan(&stored)
	if !slices.Equal(stored, []string{"ACME-1", "CVE-9"}) {
		t.Errorf("component_results.advisory_keys = %q, want [ACME-1 CVE-9]", stored)
	}
}

// Severities rank critical 4, high 3, medium and moderate 2, low 1, in
// any case of letters; unknown, empty and missing rank 0.
func testSeverityRank(t *testing.T, f *fdb) {
	for s, want := range map[string]int64{"critical": 4, "HIGH": 3, "Medium": 2, "moderate": 2, "low": 1, "": 0, "informational": 0} {
		if got := f.int(t, `SELECT upcheck_severity_rank($1)`, s); got != want {
			t.Errorf("upcheck_severity_rank(%q) = %d, want %d", s, got, want)
		}
	}
	if got := f.int(t, `SELECT upcheck_severity_rank(NULL)`); got != 0 {
		t.Errorf("upcheck_severity_rank(NULL) = %d, want 0", got)
	}
}

// upcheck_signal_rank is readmodel.SignalRank: each kind in its place, an
// unknown one (and none) last.
func testSignalRank(t *testing.T, f *fdb) {
	for _, k := range append(readmodel.SignalKinds(), "not_a_kind") {
		if got, want := f.int(t, `SELECT upcheck_signal_rank($1)`, string(k)), int64(readmodel.SignalRank(k)); got != want {
			t.Errorf("upcheck_signal_rank(%q) = %d, readmodel.SignalRank %d", k, got, want)
		}
	}
	if got := f.int(t, `SELECT upcheck_signal_rank(NULL)`); got != int64(readmodel.SignalRankUnknown) {
		t.Errorf("upcheck_signal_rank(NULL) = %d, want last", got)
	}
}

// What needs action first: a malicious package (0), an advisory known to
// be exploited (1), a security update or a vulnerable version (2), an
// update (3), a check failing, stale or not evaluated (4), up to date (5);
// no update source (6) unless a security problem or an update.
func testCatalogRank(t *testing.T, f *fdb) {
	const src = "'https://p.example/a.json'"
	for _, c := range []struct {
		args string // malicious, known_exploited, security, vulnerable, update_available, source_url, failing, stale, evaluated
		want int64
	}{
		{"true, true, true, true, true, " + src + ", false, false, true", 0},
		{"true, false, false, true, false, NULL, false, false, true", 0},
		{"false, true, true, true, true, " + src + ", false, false, true", 1},
		{"false, false, true, false, false, " + src + ", false, false, true", 2},
		{"false, false, false, true, false, " + src + ", true, true, true", 2},
		{"false, false, true, false, false, NULL, false, false, true", 2},
		{"false, false, false, false, true, " + src + ", true, true, true", 3},
		{"false, false, false, false, true, NULL, false, false, true", 3},
		{"false, false, false, false, false, NULL, true, true, false", 6},
		{"false, false, false, false, false, " + src + ", true, false, true", 4},
		{"false, false, false, false, false, " + src + ", false, true, true", 4},
		{"false, false, false, false, false, " + src + ", false, false, false", 4},
		{"false, false, false, false, false, " + src + ", false, false, true", 5},
	} {
		if got := f.int(t, `SELECT upcheck_catalog_rank(`+c.args+`)`); got != c.want {
			t.Errorf("upcheck_catalog_rank(%s) = %d, want %d", c.args, got, c.want)
		}
	}
}

// A dismissal names an advisory by its id or by any of its aliases,
// whatever the case: a dismissal covers every alias.
func testDismissalNames(t *testing.T, f *fdb) {
	const adv = `{"id": "ACME-9", "aliases": ["CVE-2021-44228", "GHSA-jfh8-c2jp-5v3q"]}`
	for id, want := range map[string]bool{
		"ACME-9": true, "acme-9": true, "CVE-2021-44228": true, "ghsa-jfh8-c2jp-5v3q": true, "GHSA-JFH8-C2JP-5V3Q": true,
		"CVE-2021-44229": false, "ACME": false,
	} {
		if got := f.bool(t, `SELECT upcheck_dismissal_names($1, $2::text::jsonb)`, id, adv); got != want {
			t.Errorf("upcheck_dismissal_names(%q, %s) = %v, want %v", id, adv, got, want)
		}
	}
	if f.bool(t, `SELECT upcheck_dismissal_names('ACME-9', '{"id": "ACME-1"}'::jsonb)`) {
		t.Error("a dismissal of ACME-9 names an advisory ACME-1 without aliases")
	}
}

// dismissAcme1 records a standing dismissal of ACME-1 of blog as advisory
// (medium, <2.4.0, no fix) was, with the given extra columns.
func (f *fdb) dismissAcme1(t *testing.T, columns, values string) {
	t.Helper()
	f.exec(t, `INSERT INTO advisory_dismissals (component_code, advisory_id, reason, severity, affected, fixed_in`+columns+`)
		VALUES ('blog', 'ACME-1', 'WAF rule 12', 'medium', '<2.4.0', ''`+values+`)`)
}

// In force: not ended, not expired (by the clock, when read), and the
// advisory as listed now has the fingerprint that was dismissed.
func testDismissalInForce(t *testing.T, f *fdb) {
	f.dismissAcme1(t, "", "")
	inForce := func(advisory string) bool {
		return f.bool(t, `SELECT upcheck_dismissal_in_force(d, $1::text::jsonb) FROM advisory_dismissals d`, advisory)
	}
	for advisory, want := range map[string]bool{
		acme1: true,
		`{"id": "ACME-1", "severity": "medium", "affected": "<2.4.0"}`:                      true,
		`{"id": "ACME-1", "severity": "high", "affected": "<2.4.0"}`:                        false,
		`{"id": "ACME-1", "severity": "medium", "affected": "<2.5.0"}`:                      false,
		`{"id": "ACME-1", "severity": "medium", "affected": "<2.4.0", "fixed_in": "2.4.1"}`: false,
		`{"id": "ACME-1", "affected": "<2.4.0"}`:                                            false,
		`{"id": "ACME-2", "severity": "medium", "affected": "<2.4.0"}`:                      false,
	} {
		if got := inForce(advisory); got != want {
			t.Errorf("standing dismissal against %s: in force %v, want %v", advisory, got, want)
		}
	}
	f.exec(t, `UPDATE advisory_dismissals SET expires_at = clock_timestamp() + interval '1 minute'`)
	if !inForce(acme1) {
		t.Error("a dismissal expiring in a minute is not in force")
	}
	f.exec(t, `UPDATE advisory_dismissals SET dismissed_at = clock_timestamp() - interval '2 days', expires_at = clock_timestamp() - interval '1 second'`)
	if inForce(acme1) {
		t.Error("an expired dismissal is in force")
	}
	f.exec(t, `UPDATE advisory_dismissals SET expires_at = NULL, ended_at = clock_timestamp(), ended_how = 'undone'`)
	if inForce(acme1) {
		t.Error("an ended dismissal is in force")
	}
}

// The advisories of a result without a dismissal in force for its
// component, in the result's order.
func testOpenAdvisories(t *testing.T, f *fdb) {
	const two = `[{"id": "ACME-1", "severity": "medium", "affected": "<2.4.0", "no_fix": true}, {"id": "ACME-2", "severity": "low"}]`
	open := func(code, advisories string) string {
		return f.text(t, `SELECT coalesce((SELECT string_agg(a->>'id', ',' ORDER BY n)
			FROM jsonb_array_elements(upcheck_open_advisories(1, $1, $2::text::jsonb)) WITH ORDINALITY AS x(a, n)), '')`, code, advisories)
	}
	if got := f.text(t, `SELECT upcheck_open_advisories(1, 'blog', '[]')::text`); got != "[]" {
		t.Errorf("open advisories of []: %s, want []", got)
	}
	if got := f.text(t, `SELECT upcheck_open_advisories(1, 'blog', NULL)::text`); got != "[]" {
		t.Errorf("open advisories of NULL: %s, want []", got)
	}
	if got := open("blog", two); got != "ACME-1,ACME-2" {
		t.Errorf("no dismissal: open %q, want ACME-1,ACME-2", got)
	}
	f.dismissAcme1(t, "", "")
	if got := open("blog", two); got != "ACME-2" {
		t.Errorf("ACME-1 dismissed: open %q, want ACME-2", got)
	}
	if got := open("shop", two); got != "ACME-1,ACME-2" {
		t.Errorf("another component's dismissal: open %q, want ACME-1,ACME-2", got)
	}
	f.exec(t, `INSERT INTO sites (name, token_hash) VALUES ('other', sha256('t'))`)
	if got := f.text(t, `SELECT coalesce((SELECT string_agg(a->>'id', ',')
			FROM jsonb_array_elements(upcheck_open_advisories((SELECT id FROM sites WHERE name = 'other'), 'blog', $1::text::jsonb)) a), '')`,
		two); got != "ACME-1,ACME-2" {
		t.Errorf("another site's blog: open %q, want ACME-1,ACME-2 (the dismissal is the local site's)", got)
	}
	changed := `[{"id": "ACME-1", "severity": "high", "affected": "<2.4.0"}, {"id": "ACME-2", "severity": "low"}]`
	if got := open("blog", changed); got != "ACME-1,ACME-2" {
		t.Errorf("ACME-1 dismissed at medium, now high: open %q, want ACME-1,ACME-2", got)
	}
	f.exec(t, `UPDATE advisory_dismissals SET ended_at = clock_timestamp(), ended_how = 'undone'`)
	if got := open("blog", two); got != "ACME-1,ACME-2" {
		t.Errorf("the dismissal ended: open %q, want ACME-1,ACME-2", got)
	}
}

// A component needs attention when any one of its flags says so (a
// malicious package, a known exploited advisory, a security update, a
// vulnerable version, a trust downgrade of any kind, an offered update
// that brings a signal, a deprecated version),
// each alone and all together; with none, or all null, it does not.
func testNeedsAttention(t *testing.T, f *fdb) {
	// malicious, known_exploited, security, vulnerable, provenance_lost, new_publisher_version, pin_downgrade, deprecated, brings
	none := []string{"false", "false", "false", "false", "NULL", "NULL", "NULL", "NULL", `'[]'::jsonb`}
	one := []string{"true", "true", "true", "true", "'1.1.0'", "'1.1.0'", "'the manifest pins no key'", "'use x'",
		`'[{"kind": "burst", "args": {"version": "1.1.0"}}]'::jsonb`}
	call := func(args []string) string { return `SELECT upcheck_needs_attention(` + strings.Join(args, ", ") + `)` }
	if f.bool(t, call(none)) {
		t.Errorf("%s: true with no flag", call(none))
	}
	if nulls := []string{"NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"}; f.bool(t, call(nulls)) {
		t.Errorf("%s: true with every flag null", call(nulls))
	}
	if !f.bool(t, call(one)) {
		t.Errorf("%s: false with every flag", call(one))
	}
	for i := range none {
		args := slices.Clone(none)
		args[i] = one[i]
		if !f.bool(t, call(args)) {
			t.Errorf("%s: false", call(args))
		}
	}
}
