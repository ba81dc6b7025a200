package web_test

// Helpers of the tests of what the advisory feeds add (intel_*_test.go,
// browser_intel_test.go): the facts are written into the stored results
// as the check's evaluation writes them, and the feeds' rows as a sync
// leaves them, so the pages and the API are tested before the sync exists.

// Gallery's unfixed advisory is one with an OSV record and exploited in the
// wild; forms is matched by a malicious-package record (its publisher text
// carries markup, which must reach no page as markup).
const (
	galleryIntel = `[{"id": "ACME-2026-011", "severity": "medium", "affected": "<=3.1.0", "no_fix": true,
		"summary": "Image metadata is shown to anonymous visitors; no fix yet", "aliases": ["CVE-2026-99011", "GHSA-gal1-xxxx-yyyy"],
		"origins": ["publisher", "osv"], "known_exploited": true,
		"kev": {"cve": "CVE-2026-99011", "date_added": "2026-11-03", "due_date": "2026-11-24",
		        "required_action": "Apply mitigations per vendor <b>instructions</b> or discontinue use.", "ransomware": "Known"},
		"epss": {"cve": "CVE-2026-99011", "score": 0.94321, "percentile": 0.9987}}]`
	formsIntel = `[{"id": "MAL-2026-4242", "severity": "critical", "affected": "*", "no_fix": true,
		"summary": "Malicious code in forms <script>alert(1)</script>", "aliases": ["GHSA-mal1-xxxx-yyyy"],
		"origins": ["osv"], "malicious": true}]`
)

// intelFacts gives gallery and forms the feeds' facts (after a check),
// and records the OSV and KEV feeds' syncs that brought them, as a sync
// leaves them: without them, no count of malicious packages nor of
// exploited ones is given (upcheck_malware_read_at,
// upcheck_exploited_read_at).
func (b *bundle) intelFacts() {
	b.t.Helper()
	b.db.MustExec(b.t, `INSERT INTO feeds (kind, url, last_success_at, last_attempt_at, records, epoch) VALUES
		('osv', 'http://127.0.0.1:9/npm/all.zip', '2026-11-30T03:00:00Z', '2026-11-30T03:00:00Z', 2, 1),
		('kev', 'http://127.0.0.1:9/kev.json', '2026-11-30T03:00:00Z', '2026-11-30T03:00:00Z', 1, 1)`)
	for _, r := range []struct{ code, advisories, ids, exploited, malicious string }{
		{"gallery", galleryIntel, "{ACME-2026-011}", "{ACME-2026-011}", "{}"},
		{"forms", formsIntel, "{MAL-2026-4242}", "{}", "{MAL-2026-4242}"},
	} {
		b.db.MustExec(b.t, `UPDATE component_results SET advisories = $2::jsonb,
			evaluation = jsonb_set(coalesce(evaluation, '{}'), '{advisories}', $2::jsonb),
			advisory_ids = $3::text[], no_fix_ids = $3::text[], exploited_ids = $4::text[], malicious_ids = $5::text[]
			WHERE code = $1`, r.code, r.advisories, r.ids, r.exploited, r.malicious)
	}
}

// feedRows stores three feeds as syncs leave them: osv interrupted (its
// last success a day before) with skipped records, kev fine, epss failing
// with a schema error; and their syncs in the history.
func (b *bundle) feedRows() {
	b.t.Helper()
	b.db.MustExec(b.t, `DELETE FROM feeds`) // the rows intelFacts recorded are replaced
	b.db.MustExec(b.t, `INSERT INTO feeds (kind, url, cursor, last_success_at, last_change_at, last_attempt_at,
		last_error, last_error_kind, last_error_args, consecutive_failures, interrupted_at, records, skipped, skipped_count, epoch) VALUES
		('osv', 'http://127.0.0.1:9/npm/all.zip', '2026-11-30T00:00:00Z', '2026-11-30T03:00:00Z', '2026-11-30T03:00:00Z', '2026-12-01T03:00:00Z',
		 'sync interrupted', 'interrupted', '{"started_at": "2026-12-01T03:00:00Z"}', 1, '2026-12-01T03:00:00Z', 1234,
		 '[{"id": "GHSA-bad1-<i>x</i>", "path": "$.affected[0].ranges[0].events", "reason": "an event has no version"}]', 3, 1),
		('kev', 'http://127.0.0.1:9/kev.json', '2026.11.30', '2026-12-01T03:00:00Z', '2026-11-30T03:00:00Z', '2026-12-01T03:00:00Z',
		 NULL, NULL, NULL, 0, NULL, 1400, '[]', 0, 1),
		('epss', 'http://127.0.0.1:9/epss.csv.gz', NULL, NULL, NULL, '2026-12-01T03:00:00Z',
		 'epss: missing column percentile', 'schema', '{"problem": "the column percentile is missing"}', 2, NULL, 0, '[]', 0, 1)`)
	b.db.MustExec(b.t, `INSERT INTO feed_syncs (kind, trigger, started_at, finished_at, status, written, unchanged, skipped, error, epoch) VALUES
		('osv', 'check', '2026-11-30T03:00:00Z', '2026-11-30T03:02:00Z', 'completed', 1234, 0, 3, NULL, 1),
		('osv', 'check', '2026-12-01T03:00:00Z', NULL, 'interrupted', 500, 0, 0, NULL, 1),
		('epss', 'cli', '2026-12-01T03:00:00Z', '2026-12-01T03:00:05Z', 'failed', 0, 0, 0, 'epss: missing column percentile', 1)`)
}
