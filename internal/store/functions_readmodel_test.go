package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The stale age is readmodel.StaleAge.
func testStaleAge(t *testing.T, f *fdb) {
	if !f.bool(t, `SELECT upcheck_stale_age() = make_interval(secs => $1)`, readmodel.StaleAge.Seconds()) {
		t.Errorf("upcheck_stale_age() is %s, readmodel.StaleAge %v", f.text(t, `SELECT upcheck_stale_age()::text`), readmodel.StaleAge)
	}
}

// A feed sync is dead once the lease it ran under is no longer held: none
// holds it, it expired, or a later epoch took it.
func testFeedSyncDead(t *testing.T, f *fdb) {
	dead := func(epoch int) bool { return f.bool(t, `SELECT upcheck_feed_sync_dead($1)`, epoch) }
	if !dead(1) {
		t.Error("a sync of epoch 1 is alive while nobody holds the lease")
	}
	f.exec(t, `UPDATE core_update_lock SET owner = gen_random_uuid(), epoch = 5, expires_at = clock_timestamp() + interval '1 minute' WHERE name = 'check'`)
	if dead(5) || !dead(4) {
		t.Errorf("lease held at epoch 5: dead(5) = %v, dead(4) = %v; want false, true", dead(5), dead(4))
	}
	f.exec(t, `UPDATE core_update_lock SET expires_at = clock_timestamp() - interval '1 second' WHERE name = 'check'`)
	if !dead(5) {
		t.Error("a sync whose lease expired is alive")
	}
}

func testFeedStaleAge(t *testing.T, f *fdb) {
	if !f.bool(t, `SELECT upcheck_feed_stale_age() = make_interval(secs => $1)`, readmodel.FeedStaleAge.Seconds()) {
		t.Errorf("upcheck_feed_stale_age() is %s, readmodel.FeedStaleAge %v", f.text(t, `SELECT upcheck_feed_stale_age()::text`), readmodel.FeedStaleAge)
	}
}

func testPinDowngradeShown(t *testing.T, f *fdb) {
	if !f.bool(t, `SELECT upcheck_pin_downgrade_shown() = make_interval(secs => $1)`, readmodel.PinDowngradeShown.Seconds()) {
		t.Errorf("upcheck_pin_downgrade_shown() is %s, readmodel.PinDowngradeShown %v", f.text(t, `SELECT upcheck_pin_downgrade_shown()::text`), readmodel.PinDowngradeShown)
	}
}

func testExpiryWarning(t *testing.T, f *fdb) {
	if !f.bool(t, `SELECT upcheck_expiry_warning() = make_interval(secs => $1)`, readmodel.ExpiryWarning.Seconds()) {
		t.Errorf("upcheck_expiry_warning() is %s, readmodel.ExpiryWarning %v", f.text(t, `SELECT upcheck_expiry_warning()::text`), readmodel.ExpiryWarning)
	}
}

// Stale: the stale age since the last success, or, never read, since the
// installation; or a document whose expiry has come, whatever else holds.
// An offline source is stale by age only while it was never imported.
func testStale(t *testing.T, f *fdb) {
	const fetched, offline = "https://p.example/a.json", "offline:air-gapped"
	for _, c := range []struct {
		what                             string
		url, installed, success, expires string // SQL expressions
		want                             bool
	}{
		{"a success 47h59m ago", fetched, "now() - interval '100 days'", "clock_timestamp() - interval '47 hours 59 minutes'", "NULL", false},
		{"a success 48h01m ago", fetched, "now() - interval '100 days'", "clock_timestamp() - interval '48 hours 1 minute'", "NULL", true},
		{"never read, installed 47h59m ago", fetched, "clock_timestamp() - interval '47 hours 59 minutes'", "NULL", "NULL", false},
		{"never read, installed 48h01m ago", fetched, "clock_timestamp() - interval '48 hours 1 minute'", "NULL", "NULL", true},
		{"never read, installation unknown", fetched, "NULL", "NULL", "NULL", false},
		{"a recent success, the document expiring now", fetched, "now()", "clock_timestamp()", "clock_timestamp()", true},
		{"a recent success, the document expiring in a minute", fetched, "now()", "clock_timestamp()", "clock_timestamp() + interval '1 minute'", false},
		{"an old success, the document not expired", fetched, "now()", "clock_timestamp() - interval '49 hours'", "clock_timestamp() + interval '1 day'", true},
		{"offline, imported 100 days ago", offline, "now() - interval '200 days'", "clock_timestamp() - interval '100 days'", "NULL", false},
		{"offline, imported, its document expired", offline, "now() - interval '200 days'", "clock_timestamp() - interval '1 day'", "clock_timestamp() - interval '1 second'", true},
		{"offline, never imported, installed 47h59m ago", offline, "clock_timestamp() - interval '47 hours 59 minutes'", "NULL", "NULL", false},
		{"offline, never imported, installed 48h01m ago", offline, "clock_timestamp() - interval '48 hours 1 minute'", "NULL", "NULL", true},
	} {
		got := f.bool(t, `SELECT upcheck_stale($1, `+c.installed+`, `+c.success+`, `+c.expires+`)`, c.url)
		if got != c.want {
			t.Errorf("%s (%s): stale %v, want %v", c.what, c.url, got, c.want)
		}
	}
}

// A source's kind is told by its address, as readmodel.SourceKindOf tells it.
func testSourceKind(t *testing.T, f *fdb) {
	for url, want := range map[string]readmodel.SourceKind{
		"https://p.example/a.json": readmodel.SourceDocument, "offline:vendor": readmodel.SourceOffline,
		"npm:@acme/blog": readmodel.SourceNpm, "npm:left-pad": readmodel.SourceNpm, "npmx:a": readmodel.SourceDocument,
	} {
		got := f.text(t, `SELECT upcheck_source_kind($1)`, url)
		if got != string(want) || readmodel.SourceKindOf(url) != want {
			t.Errorf("%s: SQL %q, Go %q, want %q", url, got, readmodel.SourceKindOf(url), want)
		}
	}
	if f.bool(t, `SELECT upcheck_source_kind(NULL) IS NULL`) != true {
		t.Error("upcheck_source_kind(NULL) is not NULL")
	}
}

// Failing: the last fetch left an error, whatever its text.
func testFailing(t *testing.T, f *fdb) {
	for arg, want := range map[string]bool{"NULL": false, "''": true, "'refused'": true} {
		if got := f.bool(t, `SELECT upcheck_failing(`+arg+`)`); got != want {
			t.Errorf("upcheck_failing(%s) = %v, want %v", arg, got, want)
		}
	}
}

// The version grows by one for each transaction that writes a table the
// read model reads (once, however many statements and tables), by none for
// one that rolls back or writes another table.
func testReadModelChanged(t *testing.T, f *fdb) {
	ctx := context.Background()
	version := func() int64 { return f.int(t, `SELECT version FROM read_model_version`) }
	v := version()
	for _, sql := range []string{
		`INSERT INTO components (code, name, installed_version, source_url) VALUES ('blog', 'Blog', '2.3.0', 'https://p.example/a.json')`,
		`INSERT INTO sources (url, epoch, document, document_hash) VALUES ('https://p.example/a.json', 1, 'doc', sha256('doc'))`,
		`INSERT INTO component_results (code, source_url, installed_version, core_version, document_hash, epoch)
			VALUES ('blog', 'https://p.example/a.json', '2.3.0', '1.0.0', sha256('doc'), 1)`,
		`INSERT INTO security_problems (code, kind, problem) VALUES ('blog', 'release', '2.4.0')`,
		`INSERT INTO advisory_dismissals (component_code, advisory_id, reason) VALUES ('blog', 'ACME-1', 'tested')`,
		`UPDATE components SET name = 'The blog'`,
		`DELETE FROM security_problems`,
		`TRUNCATE advisory_dismissals`,
	} {
		f.exec(t, sql)
		if w := version(); w != v+1 {
			t.Errorf("%s: version %d, want %d", sql, w, v+1)
		}
		v = version()
	}
	f.exec(t, `INSERT INTO users (email, role, password_hash) VALUES ('ada@example.org', 'admin', 'x')`)
	if version() != v {
		t.Error("a write to users, which the read model does not read, changed the version")
	}
	tx, err := f.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{`UPDATE components SET name = 'Blog'`, `UPDATE sources SET epoch = 2`, `UPDATE component_results SET epoch = 2`} {
		if _, err := tx.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if version() != v {
		t.Error("a transaction that rolled back changed the version")
	}
	tx, err = f.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{`UPDATE components SET name = 'Blog'`, `UPDATE sources SET epoch = 2`, `UPDATE component_results SET epoch = 2`} {
		if _, err := tx.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if w := version(); w != v+1 {
		t.Errorf("one transaction of three writes: version %d, want %d", w, v+1)
	}
}

// The first future instant at which a flag turns by the clock alone: the
// stale age after a source's success or, never read, after a component's
// installation; a document's expiry; a standing dismissal's expiry.
// Instants past, a source no component uses and an ended dismissal do not
// count; with none, null.
func testReadModelTurnsAt(t *testing.T, f *fdb) {
	turnsAt := func() *time.Time {
		var at *time.Time
		f.QueryRow(t, `SELECT upcheck_read_model_turns_at()`).Scan(&at)
		return at
	}
	is := func(what string, want string) {
		t.Helper()
		at := turnsAt()
		var w time.Time
		f.QueryRow(t, `SELECT `+want).Scan(&w)
		if at == nil || !at.Equal(w) {
			t.Errorf("%s: turns at %v, want %v", what, at, w)
		}
	}
	if at := turnsAt(); at != nil {
		t.Fatalf("an empty catalog turns at %v, want null", at)
	}
	f.exec(t, `INSERT INTO components (code, name, installed_version, source_url, created_at)
		VALUES ('blog', 'Blog', '2.3.0', 'https://p.example/a.json', clock_timestamp() - interval '1 hour')`)
	is("a component never read, installed an hour ago", `(SELECT created_at + interval '48 hours' FROM components)`)
	f.exec(t, `INSERT INTO sources (url, epoch, last_success_at) VALUES ('https://p.example/a.json', 1, clock_timestamp() - interval '2 hours')`)
	is("its source succeeded two hours ago", `(SELECT last_success_at + interval '48 hours' FROM sources)`)
	f.exec(t, `UPDATE sources SET expires_at = clock_timestamp() + interval '3 hours'`)
	is("its document expires in three hours", `(SELECT expires_at FROM sources)`)
	f.exec(t, `INSERT INTO advisory_dismissals (component_code, advisory_id, reason, expires_at)
		VALUES ('blog', 'ACME-1', 'tested', clock_timestamp() + interval '1 hour')`)
	is("a dismissal expires in an hour", `(SELECT expires_at FROM advisory_dismissals)`)
	f.exec(t, `UPDATE advisory_dismissals SET ended_at = clock_timestamp(), ended_how = 'undone'`)
	is("the dismissal ended", `(SELECT expires_at FROM sources)`)
	f.exec(t, `INSERT INTO sources (url, epoch, expires_at) VALUES ('https://unused.example/b.json', 1, clock_timestamp() + interval '1 minute')`)
	is("an unused source's document expires in a minute", `(SELECT expires_at FROM sources WHERE url = 'https://p.example/a.json')`)
	f.exec(t, `UPDATE sources SET expires_at = clock_timestamp() - interval '1 minute' WHERE url = 'https://p.example/a.json'`)
	is("its document expired", `(SELECT last_success_at + interval '48 hours' FROM sources WHERE url = 'https://p.example/a.json')`)
	f.exec(t, `UPDATE sources SET last_success_at = clock_timestamp() - interval '49 hours' WHERE url = 'https://p.example/a.json'`)
	if at := turnsAt(); at != nil {
		t.Errorf("every instant is past: turns at %v, want null", at)
	}
}

// The advisory feeds were read once a feed that can name malicious
// packages completed a sync: upcheck_malware_read_at is the latest
// success of an osv or osv-api feed, exactly the kinds
// readmodel.FeedKind.NamesMalware names; null while none succeeded (none
// configured, or only failures, or only KEV and EPSS, which name none).
func testMalwareReadAt(t *testing.T, f *fdb) {
	readAt := func() *time.Time {
		t.Helper()
		var at *time.Time
		f.QueryRow(t, `SELECT upcheck_malware_read_at()`).Scan(&at)
		return at
	}
	if at := readAt(); at != nil {
		t.Errorf("no feed configured: read at %v, want null", at)
	}
	f.exec(t, `INSERT INTO feeds (kind, url, epoch, last_attempt_at, last_error) VALUES ('osv', 'https://feeds.example/all.zip', 1, now(), 'connection refused')`)
	if at := readAt(); at != nil {
		t.Errorf("an osv feed that only failed: read at %v, want null", at)
	}
	f.exec(t, `DELETE FROM feeds`)
	success := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	for _, kind := range readmodel.AllFeedKinds() {
		f.exec(t, `DELETE FROM feeds`)
		f.exec(t, `INSERT INTO feeds (kind, url, epoch, last_success_at) VALUES ($1, 'https://feeds.example/x', 1, $2)`, string(kind), success)
		if at := readAt(); kind.NamesMalware() != (at != nil) || at != nil && !at.Equal(success) {
			t.Errorf("only a %s feed read at %s: upcheck_malware_read_at() = %v, NamesMalware() = %v", kind, success, at, kind.NamesMalware())
		}
	}
	f.exec(t, `DELETE FROM feeds`)
	later := success.Add(26 * time.Hour)
	f.exec(t, `INSERT INTO feeds (kind, url, epoch, last_success_at) VALUES
		('osv', 'https://feeds.example/all.zip', 1, $1), ('osv-api', 'https://feeds.example/api', 1, $2),
		('kev', 'https://feeds.example/kev.json', 1, $3)`, success, later, later.Add(time.Hour))
	if at := readAt(); at == nil || !at.Equal(later) {
		t.Errorf("osv read at %s, osv-api at %s, kev later: read at %v, want the osv-api's", success, later, at)
	}
}

// The KEV catalogue was read once a feed that can say an advisory is
// exploited in the wild completed a sync: upcheck_exploited_read_at is the
// latest success of a kev feed, exactly the kinds
// readmodel.FeedKind.NamesExploited names; null while none succeeded (none
// configured, or only failures, or only OSV and EPSS feeds, which say
// nothing of exploitation).
func testExploitedReadAt(t *testing.T, f *fdb) {
	readAt := func() *time.Time {
		t.Helper()
		var at *time.Time
		f.QueryRow(t, `SELECT upcheck_exploited_read_at()`).Scan(&at)
		return at
	}
	if at := readAt(); at != nil {
		t.Errorf("no feed configured: read at %v, want null", at)
	}
	f.exec(t, `INSERT INTO feeds (kind, url, epoch, last_attempt_at, last_error) VALUES ('kev', 'https://feeds.example/kev.json', 1, now(), 'connection refused')`)
	if at := readAt(); at != nil {
		t.Errorf("a kev feed that only failed: read at %v, want null", at)
	}
	success := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	for _, kind := range readmodel.AllFeedKinds() {
		f.exec(t, `DELETE FROM feeds`)
		f.exec(t, `INSERT INTO feeds (kind, url, epoch, last_success_at) VALUES ($1, 'https://feeds.example/x', 1, $2)`, string(kind), success)
		if at := readAt(); kind.NamesExploited() != (at != nil) || at != nil && !at.Equal(success) {
			t.Errorf("only a %s feed read at %s: upcheck_exploited_read_at() = %v, NamesExploited() = %v", kind, success, at, kind.NamesExploited())
		}
	}
	f.exec(t, `DELETE FROM feeds`)
	later := success.Add(26 * time.Hour)
	f.exec(t, `INSERT INTO feeds (kind, url, epoch, last_success_at) VALUES
		('kev', 'https://feeds.example/kev.json', 1, $1), ('osv', 'https://feeds.example/all.zip', 1, $2),
		('epss', 'https://feeds.example/epss.csv.gz', 1, $2)`, success, later)
	if at := readAt(); at == nil || !at.Equal(success) {
		t.Errorf("kev read at %s, osv and epss later: read at %v, want the kev's", success, at)
	}
}
