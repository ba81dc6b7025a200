package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// advisory is ACME-1 as the blog's current result lists it.
const advisory = `{"id": "ACME-1", "severity": "medium", "affected": "<2.4.0", "summary": "XSS", "no_fix": true}`

// site installs blog 2.3.0 (and the core) with a current result listing
// ACME-1 and ACME-2, and a user ada.
func (b *bundle) site(t *testing.T) store.User {
	t.Helper()
	for _, sql := range []string{
		`INSERT INTO components (code, name, installed_version, source_url) VALUES
			('core', 'Core', '1.9.0', 'https://p.example/a.json'), ('blog', 'Blog', '2.3.0', 'https://p.example/a.json')`,
		`INSERT INTO sources (url, epoch, document, document_hash, last_success_at)
			VALUES ('https://p.example/a.json', 1, 'doc', sha256('doc'), clock_timestamp())`,
		`INSERT INTO component_results (code, source_url, installed_version, core_version, document_hash, advisories,
			advisory_ids, no_fix_ids, evaluation, epoch)
			VALUES ('blog', 'https://p.example/a.json', '2.3.0', '1.9.0', sha256('doc'),
			        '[` + advisory + `, {"id": "ACME-2", "severity": "low", "affected": "*", "fixed_in": "9.0.0", "no_fix": false}]',
			        '{ACME-1,ACME-2}', '{ACME-1}', '{}', 1)`,
		// The evaluation lists the same advisories, as evaluation writes it.
		`UPDATE component_results SET evaluation = jsonb_build_object('advisories', advisories)`,
	} {
		b.exec(t, sql)
	}
	u, err := b.st.UserCreate(context.Background(), "ada@example.org", "admin", "$argon2id$x")
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// state is the read model's view of blog: vulnerable, without a fix, and
// the ids of the advisories that count.
func (b *bundle) state(t *testing.T) (vulnerable, noFix bool, open string) {
	t.Helper()
	b.db.QueryRow(t, `SELECT vulnerable, vulnerable_no_fix,
		coalesce((SELECT string_agg(a->>'id', ',') FROM jsonb_array_elements(open_advisories) a), '')
		FROM component_state WHERE code = 'blog'`).Scan(&vulnerable, &noFix, &open)
	return vulnerable, noFix, open
}

func dismiss(t *testing.T, st *store.Store, d store.NewDismissal) store.Dismissal {
	t.Helper()
	out, err := st.DismissAdvisory(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A dismissal records who, why, until when and the advisory as it was; it
// and its audit row commit together; dismissing again replaces it (the old
// one kept as history) and restoring ends it, each audited once.
func TestDismissAdvisoryRecordsAndAuditsInSameTransaction(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	u := b.site(t)
	if v, _, open := b.state(t); !v || open != "ACME-1,ACME-2" {
		t.Fatalf("before: vulnerable %v, open %q", v, open)
	}
	until := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	d := dismiss(t, b.st, store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-1", UserID: u.ID, Reason: "WAF rule 12 blocks it", ExpiresAt: &until})
	want := store.Fingerprint{Severity: "medium", Affected: "<2.4.0", FixedIn: ""}
	if d.By != "ada@example.org" || d.Dismissed != want || !d.InForce {
		t.Fatalf("dismissal %+v", d)
	}
	if v, noFix, open := b.state(t); !v || noFix || open != "ACME-2" {
		t.Fatalf("after dismissing ACME-1: vulnerable %v, no fix %v, open %q; want ACME-2 alone to count", v, noFix, open)
	}
	standing, err := b.st.StandingDismissals(ctx, store.LocalSite, "blog")
	if err != nil {
		t.Fatal(err)
	}
	got := standing["ACME-1"]
	if got.Reason != "WAF rule 12 blocks it" || got.ExpiresAt == nil || !got.ExpiresAt.Equal(until) || got.By != "ada@example.org" ||
		!got.InForce || got.Expired || got.Dismissed != want || len(standing) != 1 {
		t.Fatalf("standing %+v", standing)
	}

	// Rows written by one transaction carry its id in xmin.
	if n := b.count(t, `SELECT count(*) FROM advisory_dismissals d JOIN audit_log a
		ON a.xmin = d.xmin AND (a.detail->>'dismissal')::bigint = d.id AND a.action = 'advisory.dismiss'`); n != 1 {
		t.Fatal("the dismissal and its audit row were written by different transactions")
	}

	// Again, with another reason: replaces, keeps the first as history;
	// the end of the first, the second and its audit row commit together.
	dismiss(t, b.st, store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-1", UserID: u.ID, Reason: "plugin page disabled"})
	if n := b.count(t, "SELECT count(*) FROM advisory_dismissals WHERE component_code = 'blog'"); n != 2 {
		t.Fatalf("%d dismissal rows, want the replaced one kept", n)
	}
	if n := b.count(t, "SELECT count(*) FROM advisory_dismissals WHERE ended_at IS NULL AND reason = 'plugin page disabled'"); n != 1 {
		t.Fatal("the new reason does not stand")
	}
	if n := b.count(t, `SELECT count(*) FROM advisory_dismissals d
		WHERE d.xmin = (SELECT xmin FROM audit_log WHERE action = 'advisory.dismiss' ORDER BY id DESC LIMIT 1)`); n != 2 {
		t.Fatalf("%d of 2 rows (the replaced one, the new one) written with the replacement's audit row", n)
	}
	if n := b.count(t, "SELECT count(*) FROM audit_log WHERE action = 'advisory.dismiss' AND (detail->>'replaced')::bigint = $1", d.ID); n != 1 {
		t.Fatal("the replacement's audit row does not name the dismissal it replaced")
	}

	if err := b.st.UndismissAdvisory(ctx, store.LocalSite, "blog", "ACME-1", u.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.st.UndismissAdvisory(ctx, store.LocalSite, "blog", "ACME-1", u.ID); err != nil {
		t.Fatalf("second undismissal: %v", err)
	}
	if v, _, open := b.state(t); !v || open != "ACME-1,ACME-2" {
		t.Fatalf("after restoring: vulnerable %v, open %q", v, open)
	}
	if n := b.count(t, "SELECT count(*) FROM advisory_dismissals WHERE ended_at IS NULL"); n != 0 {
		t.Fatalf("%d dismissals stand after undismiss", n)
	}
	if n := b.count(t, "SELECT count(*) FROM audit_log WHERE action = $1 AND user_id = $2", store.AuditAdvisoryUndismiss, u.ID); n != 1 {
		t.Fatalf("undismiss audit rows: %d, want 1", n)
	}

	// Make every audit insert fail: the dismissal must roll back with it.
	dismiss(t, b.st, store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-2", UserID: u.ID, Reason: "not exposed"})
	b.exec(t, `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit refused'; END $$`)
	b.exec(t, `CREATE TRIGGER refuse BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse()`)
	if _, err := b.st.DismissAdvisory(ctx, store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-1", UserID: u.ID, Reason: "x"}); err == nil {
		t.Fatal("dismissal succeeded although its audit row failed")
	}
	if n := b.count(t, "SELECT count(*) FROM advisory_dismissals WHERE advisory_id = 'ACME-1' AND ended_at IS NULL"); n != 0 {
		t.Fatal("dismissal committed without its audit row")
	}
	if err := b.st.UndismissAdvisory(ctx, store.LocalSite, "blog", "ACME-2", u.ID); err == nil {
		t.Fatal("undismissal succeeded although its audit row failed")
	}
	if n := b.count(t, "SELECT count(*) FROM advisory_dismissals WHERE advisory_id = 'ACME-2' AND ended_at IS NULL"); n != 1 {
		t.Fatal("undismissal committed without its audit row")
	}
}

// The input is refused before anything is written: no reason, a reason
// too long, an expiry that has passed (the database's check), an advisory
// the current result does not list.
func TestDismissAdvisoryRefusesBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	u := b.site(t)
	past := time.Now().Add(-time.Minute)
	for _, tc := range []struct {
		d    store.NewDismissal
		want error
	}{
		{store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-1", Reason: " \n\t"}, store.ErrReasonRequired},
		{store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-1", Reason: strings.Repeat("é", store.MaxReasonLength+1)}, store.ErrReasonTooLong},
		{store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-1", Reason: "ok", ExpiresAt: &past}, store.ErrExpiryPassed},
		{store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-9", Reason: "ok"}, store.ErrNotFound},
		{store.NewDismissal{Site: store.LocalSite, Code: "nope", AdvisoryID: "ACME-1", Reason: "ok"}, store.ErrNotFound},
	} {
		tc.d.UserID = u.ID
		if _, err := b.st.DismissAdvisory(context.Background(), tc.d); !errors.Is(err, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.d, err, tc.want)
		}
	}
	if _, err := b.st.DismissAdvisory(context.Background(), store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-1", UserID: u.ID,
		Reason: strings.Repeat("é", store.MaxReasonLength)}); err != nil {
		t.Fatalf("a reason of exactly %d characters: %v", store.MaxReasonLength, err)
	}
	if n := b.count(t, "SELECT count(*) FROM audit_log"); n != 1 {
		t.Fatalf("%d audit rows, want the one accepted dismissal's", n)
	}
}

// A dismissal ends by itself at its expiry, judged by the database clock
// when read: nothing is written, the row stays as history, and the
// advisory counts again.
func TestDismissalExpiresByItself(t *testing.T) {
	t.Parallel()
	b := setup(t)
	u := b.site(t)
	until := time.Now().Add(time.Hour)
	dismiss(t, b.st, store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-1", UserID: u.ID, Reason: "accepted", ExpiresAt: &until})
	if _, noFix, _ := b.state(t); noFix {
		t.Fatal("dismissed: ACME-1 still counts")
	}
	b.exec(t, `UPDATE advisory_dismissals SET dismissed_at = clock_timestamp() - interval '2 days',
		expires_at = clock_timestamp() - interval '1 second'`)
	if v, noFix, open := b.state(t); !v || !noFix || open != "ACME-1,ACME-2" {
		t.Fatalf("expired: vulnerable %v, no fix %v, open %q; want ACME-1 to count again", v, noFix, open)
	}
	standing, err := b.st.StandingDismissals(context.Background(), store.LocalSite, "blog")
	if err != nil {
		t.Fatal(err)
	}
	if d := standing["ACME-1"]; d.InForce || !d.Expired || d.Reason != "accepted" {
		t.Fatalf("expired dismissal %+v", d)
	}
	// The audit log lists the expiry, at its time, with the reason.
	events, err := b.st.AuditEvents(context.Background(), string(readmodel.AuditKindDismissal), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[0].Action != string(store.AuditAdvisoryDismiss) || events[1].Action != string(store.AuditAdvisoryExpire) ||
		events[1].Reason != "accepted" || events[1].Actor != "" || events[0].Actor != "ada@example.org" {
		t.Fatalf("audit events %+v", events)
	}
}

// Any change of the advisory's severity, affected range or fixed-in
// version makes it count again; a change of anything else (its summary)
// does not.
func TestDismissalEndsWhenTheAdvisoryChanges(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		set   string // jsonb_set on ACME-1
		holds bool
	}{
		"severity raised":  {`'{0,severity}', '"high"'`, false},
		"severity lowered": {`'{0,severity}', '"low"'`, false},
		"range widened":    {`'{0,affected}', '"<2.5.0"'`, false},
		"fix published":    {`'{0,fixed_in}', '"2.4.1"'`, false},
		"summary edited":   {`'{0,summary}', '"Stored XSS in comments"'`, true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			u := b.site(t)
			dismiss(t, b.st, store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-1", UserID: u.ID, Reason: "accepted"})
			b.exec(t, `UPDATE component_results SET advisories = jsonb_set(advisories, `+tc.set+`)`)
			b.exec(t, `UPDATE component_results SET evaluation = jsonb_build_object('advisories', advisories)`)
			_, _, open := b.state(t)
			if holds := !strings.Contains(open, "ACME-1"); holds != tc.holds {
				t.Fatalf("open advisories %q: dismissal holds %v, want %v", open, holds, tc.holds)
			}
			standing, err := b.st.StandingDismissals(context.Background(), store.LocalSite, "blog")
			if err != nil {
				t.Fatal(err)
			}
			if d := standing["ACME-1"]; d.InForce != tc.holds || d.Expired {
				t.Fatalf("standing dismissal %+v, want in force %v", d, tc.holds)
			}
		})
	}
}

// Deleting a user keeps what they dismissed, under their email, and what
// they did.
func TestDeletedUserKeepsDismissalsAndAudit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	u := b.site(t)
	dismiss(t, b.st, store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-1", UserID: u.ID, Reason: "accepted"})
	if err := b.st.AuditAppend(ctx, u.ID, "test.raw", json.RawMessage(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	b.exec(t, "DELETE FROM users")
	standing, err := b.st.StandingDismissals(ctx, store.LocalSite, "blog")
	if err != nil || !standing["ACME-1"].InForce || standing["ACME-1"].By != "ada@example.org" {
		t.Fatalf("dismissals after user deletion: %+v, %v", standing, err)
	}
	if n := b.count(t, "SELECT count(*) FROM audit_log WHERE user_id IS NULL AND (action <> 'test.raw' OR detail = '{\"n\": 1}')"); n != 2 {
		t.Fatalf("audit rows kept: %d, want 2", n)
	}
	events, err := b.st.AuditEvents(ctx, "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[1].Actor != "ada@example.org" || events[1].Action != string(store.AuditAdvisoryDismiss) {
		t.Fatalf("audit events after user deletion %+v; want the dismissal still under its author", events)
	}
}

// The audit log lists audit rows, expiries and checks in one time order,
// newest first, by kind, and pages.
func TestAuditEventsOrderKindsAndPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	u := b.site(t)
	b.exec(t, `INSERT INTO check_runs (trigger, actor, status, started_at) VALUES
		('scheduled', 'cron', 'completed', '2020-01-01T00:00:00Z'),
		('manual', 'ada@example.org', 'cooldown', '2099-01-01T00:00:00Z')`)
	dismiss(t, b.st, store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-1", UserID: u.ID, Reason: "accepted"})
	if err := b.st.AuditAppend(ctx, u.ID, "token.create", map[string]any{"name": "ci"}); err != nil {
		t.Fatal(err)
	}
	all, err := b.st.AuditEvents(ctx, "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range all {
		got = append(got, e.Kind+":"+e.Action+":"+e.Status)
	}
	want := "check:check:cooldown account:token.create: dismissal:advisory.dismiss: check:check:completed"
	if strings.Join(got, " ") != want {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
	for kind, n := range map[string]int{"": 4, string(readmodel.AuditKindCheck): 2, string(readmodel.AuditKindDismissal): 1, string(readmodel.AuditKindAccount): 1} {
		c, err := b.st.AuditEventCount(ctx, kind)
		if err != nil || c != n {
			t.Errorf("count of %q: %d %v, want %d", kind, c, err, n)
		}
		events, err := b.st.AuditEvents(ctx, kind, 0, 0)
		if err != nil || len(events) != n {
			t.Errorf("events of %q: %d %v, want %d", kind, len(events), err, n)
		}
	}
	page, err := b.st.AuditEvents(ctx, "", 2, 1)
	if err != nil || len(page) != 2 || page[0].Action != "token.create" || page[1].Action != string(store.AuditAdvisoryDismiss) {
		t.Fatalf("page 2 of 2 per page from the second: %+v %v", page, err)
	}
	if d := all[2]; d.Component != "blog" || d.Advisory != "ACME-1" || d.Reason != "accepted" || d.Actor != "ada@example.org" {
		t.Fatalf("dismissal event %+v", d)
	}
	if c := all[0]; c.Trigger != "manual" || c.Actor != "ada@example.org" {
		t.Fatalf("check event %+v", c)
	}
}
