package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/feedsync"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/feedserver"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/wait"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// renamedSite is the core and gallery 3.0.0 on a publisher whose document lists
// gallery's advisories (advisories, the document's JSON), checked with a
// KEV catalogue listing CVE-2026-1111 and CVE-2026-5555, and forms (the
// npm package @acme/forms) 1.0.0 matched by the OSV feed's records (recs);
// one webhook channel.
func renamedSite(b *bundle, advisories string, recs ...[]byte) (*publisher.Publisher, *feedserver.Server, *feedsync.Sync) {
	b.t.Helper()
	pub := publisher.New(b.t)
	setGallery(pub, 1, advisories)
	m := &manifest.Manifest{Components: []manifest.Component{
		{Code: "core", Name: "Core", Version: "1.9.0", Source: pub.URL},
		{Code: "gallery", Name: "Gallery", Version: "3.0.0", Source: pub.URL},
		{Code: "forms", Name: "Forms", Version: "1.0.0", Source: pub.URL, Package: "@acme/forms"},
	}}
	if _, err := updatecheck.NewSyncer(b.checker).Sync(context.Background(), m); err != nil {
		b.t.Fatal(err)
	}
	fs := feedserver.New(b.t)
	fs.SetRecords(osvRecords(recs...))
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	var entries []osvgen.KEVEntry
	for _, cve := range []string{"CVE-2026-1111", "CVE-2026-5555"} {
		entries = append(entries, osvgen.KEVEntry{CVE: cve, VendorProject: "Acme", Product: "Gallery", Name: "Acme Gallery flaw",
			DateAdded: day, RequiredAction: "Apply mitigations.", DueDate: day.AddDate(0, 0, 21), RansomwareUse: "Unknown"})
	}
	fs.SetKEV(osvgen.KEVCatalog{Released: day, Entries: entries})
	f := updatecheck.NewFeeds(b.checker, []feed.Feed{
		{Kind: readmodel.FeedOSV, URL: fs.ArchiveURL()}, {Kind: readmodel.FeedKEV, URL: fs.KEVURL()},
	}, b.t.TempDir())
	b.checker.UseFeeds(f)
	if _, err := b.notify.AddChannel(context.Background(), store.NewChannel{Name: "ops", Kind: "webhook", Target: "http://127.0.0.1:1/hook", Events: "security"}); err != nil {
		b.t.Fatal(err)
	}
	return pub, fs, f
}

// setGallery publishes the document of sequence seq: the core's,
// gallery's and forms's one release, gallery's advisories.
func setGallery(pub *publisher.Publisher, seq int, advisories string) {
	pub.Set("/", fmt.Appendf(nil, `{"format": 1, "publisher": "acme", "sequence": %d, "packages": {
		"core": {"releases": [{"version": "1.9.0"}]},
		"gallery": {"releases": [{"version": "3.0.0"}], "advisories": %s},
		"forms": {"releases": [{"version": "1.0.0"}]}}}`, seq, advisories))
}

// osvRecords is a record set for the feed server, by each record's id.
func osvRecords(recs ...[]byte) iter.Seq2[string, []byte] {
	return func(yield func(string, []byte) bool) {
		for _, r := range recs {
			var head struct{ ID string }
			if err := json.Unmarshal(r, &head); err != nil {
				panic(err)
			}
			if !yield(head.ID, r) {
				return
			}
		}
	}
}

// edited is rec with the members of set set (as JSON values) and a
// modified time after every generated record's, so that the feed's next
// sync reads it.
func edited(t *testing.T, rec []byte, set map[string]any) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec, &m); err != nil {
		t.Fatal(err)
	}
	m["modified"] = "2026-11-30T00:00:00Z"
	maps.Copy(m, set)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// newEvents is the keys of the events queued since before (b.events()).
func (b *bundle) newEvents(before map[string]string) []string {
	b.t.Helper()
	var out []string
	for k := range b.events() {
		if _, ok := before[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// An advisory comes back under another id, which lists the old one among
// its aliases: the publisher's ACME-1 (exploited: its CVE is in KEV) and
// ACME-2 (unfixed) become GHSA ids, and the OSV feed withdraws its
// malicious-package record MAL-2026-1001 for a GHSA record listing it. No
// second event is queued for any of them, by the next check or the feed's
// re-evaluation, and the check's cheap question agrees; an unrelated
// exploited and an unrelated unfixed advisory, beside them, each queue
// their own.
func TestAdvisoryUnderAnotherIDIsNotNotifiedTwice(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.DefaultTimings())
	mal := osvgen.Record("MAL-2026-1001", "@acme/forms", osvgen.KindMalware, "", "")
	pub, fs, f := renamedSite(b, `[
		{"id": "ACME-1", "aliases": ["CVE-2026-1111"], "severity": "high", "affected": "<=3.0.0", "summary": "Remote code execution"},
		{"id": "ACME-2", "severity": "medium", "affected": "<=3.0.0", "summary": "Open redirect"}]`, mal)
	b.check()
	first := b.events()
	want := []string{"1 advisory.exploited:gallery/ACME-1", "1 advisory.unfixed:gallery@3.0.0/ACME-2",
		"1 malicious_package:forms@1.0.0/MAL-2026-1001"}
	if got := slices.Sorted(maps.Keys(first)); !slices.Equal(got, want) {
		t.Fatalf("first check queued %v, want %v", got, want)
	}

	setGallery(pub, 2, `[
		{"id": "GHSA-2222-3333-4444", "aliases": ["ACME-1", "CVE-2026-1111"], "severity": "high", "affected": "<=3.0.0", "summary": "Remote code execution"},
		{"id": "GHSA-5555-6666-7777", "aliases": ["acme-2"], "severity": "medium", "affected": "<=3.0.0", "summary": "Open redirect"},
		{"id": "ACME-3", "aliases": ["CVE-2026-5555"], "severity": "high", "affected": "<=3.0.0", "summary": "Another flaw"},
		{"id": "ACME-4", "severity": "low", "affected": "<=3.0.0", "summary": "A third flaw"}]`)
	b.check()
	if ids := b.advisoryIDs("gallery"); !slices.Equal(ids, []string{"GHSA-2222-3333-4444", "GHSA-5555-6666-7777", "ACME-3", "ACME-4"}) {
		t.Fatalf("gallery's advisories %v, want the document's", ids)
	}
	want = []string{"1 advisory.exploited:gallery/ACME-3", "1 advisory.unfixed:gallery@3.0.0/ACME-4"}
	if got := b.newEvents(first); !slices.Equal(got, want) {
		t.Errorf("the check after the renames queued %v, want only the unrelated advisories' %v", got, want)
	}

	second := b.events()
	fs.SetRecords(osvRecords(edited(t, mal, map[string]any{"withdrawn": "2026-11-30T00:00:00Z"}),
		edited(t, osvgen.Record("GHSA-mmmm-2222-3333", "@acme/forms", osvgen.KindMalware, "", "", "MAL-2026-1001"), nil)))
	// A sync that failed (a loaded machine can run past the lease
	// transactions' limit) is tried again, as the next check would.
	wait.For(t, "forms's advisories to be the GHSA record only", 30*time.Second, func() (bool, error) {
		if _, err := f.RunLockedFeedSync(context.Background()); err != nil {
			return false, err
		}
		return slices.Equal(b.advisoryIDs("forms"), []string{"GHSA-mmmm-2222-3333"}), nil
	})
	var malicious bool
	b.db.QueryRow(t, `SELECT malicious FROM component_state WHERE code = 'forms'`).Scan(&malicious)
	if !malicious {
		t.Fatal("forms is not malicious by the GHSA record")
	}
	if got := b.newEvents(second); len(got) != 0 {
		t.Errorf("the feed's re-evaluation queued %v for the malicious package under another id, want none", got)
	}
	var batch store.Batch
	batch.EventPlanNothingNew([]string{"gallery", "forms"})
	if err := b.store.SendBatch(context.Background(), &batch); err != nil {
		t.Errorf("every advisory notified under one of its ids: %v, want nothing to queue", err)
	}
	b.check()
	if got := b.newEvents(second); len(got) != 0 {
		t.Errorf("a check after all queued %v, want none", got)
	}
}

// advisoryIDs is the ids of code's stored advisories, in order.
func (b *bundle) advisoryIDs(code string) []string {
	b.t.Helper()
	var ids []string
	b.db.QueryRow(b.t, `SELECT coalesce(array_agg(a->>'id' ORDER BY n), '{}') FROM component_results r,
		jsonb_array_elements(r.advisories) WITH ORDINALITY AS x(a, n) WHERE r.code = $1`, code).Scan(&ids)
	return ids
}
