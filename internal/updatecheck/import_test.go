package updatecheck

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/testkit"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

const offlineURL = "offline:acme"

// offlineSite installs a core and two plugins whose documents come by
// import only, signed with the returned key.
func (b *bundle) offlineSite() updatedoc.PrivateKey {
	b.t.Helper()
	pub, priv := generateKey(b.t)
	b.sync(
		manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: offlineURL, Key: pub.String()},
		manifest.Component{Code: "blog", Name: "Blog", Version: "2.3.0", Source: offlineURL, Key: pub.String()},
		manifest.Component{Code: "forms", Name: "Forms", Version: "1.0.0", Source: offlineURL, Key: pub.String()},
	)
	return priv
}

func (b *bundle) importDoc(url string, body []byte, sig string) ImportResult {
	b.t.Helper()
	res, err := NewImporter(b.checker).Import(context.Background(), url, body, sig, "admin@example.test")
	if err != nil {
		b.t.Fatal(err)
	}
	return res
}

// A signed document imported by hand is accepted as a fetched one would
// be: its components are evaluated from it and their results are current;
// the import is in the history with its actor.
func TestImportSignedDocument(t *testing.T) {
	t.Parallel()
	b := setup(t)
	priv := b.offlineSite()
	body := doc(10, map[string]string{"core": pkgCore, "blog": pkgBlog, "forms": pkgUpToDate})

	res := b.importDoc(offlineURL, body, "\n"+updatedoc.Sign(body, priv)+"\n")
	if res.Status != Imported || res.Sequence != 10 || res.Components != 3 || res.RunID == 0 {
		t.Fatalf("import = %+v, want imported, sequence 10, 3 components", res)
	}
	rs := b.results()
	if r := rs["blog"]; !r.Evaluated || !r.Security || !r.Vulnerable || r.Update != "2.4.0" || r.Stale {
		t.Fatalf("blog = %+v, want evaluated from the imported document, not stale", r)
	}
	if r := rs["core"]; !r.Evaluated || r.Update != "1.10.0" {
		t.Fatalf("core = %+v", r)
	}
	if s := b.source(offlineURL); s.Sequence != 10 || s.SignatureState != "verified" || s.LastError != "" {
		t.Fatalf("source = %+v", s)
	}
	var actor string
	b.db.QueryRow(t, "SELECT actor FROM check_runs WHERE trigger = 'import'").Scan(&actor)
	if got := b.runs(); len(got) != 1 || got[0] != "import:completed" || actor != "admin@example.test" {
		t.Fatalf("history = %v by %q, want one completed import by its actor", got, actor)
	}
	// An import is no check of the publishers: the summary's last check
	// is still none, and the import completed no period (a scheduled
	// check still runs).
	if sum, err := b.reads.Summary(context.Background()); err != nil || sum.LastCheck != nil {
		t.Fatalf("summary's last check after an import = %+v (%v), want none", sum.LastCheck, err)
	}
	var completed *time.Time
	b.db.QueryRow(t, "SELECT last_completed_at FROM core_update_lock WHERE name = 'check'").Scan(&completed)
	if completed != nil {
		t.Fatalf("an import completed the period at %v", completed)
	}

	// The same publication again: kept, evaluated again.
	if res := b.importDoc(offlineURL, body, updatedoc.Sign(body, priv)); res.Status != ImportUnchanged || res.Components != 3 {
		t.Fatalf("same document again = %+v, want unchanged", res)
	}
	if _, err := NewImporter(b.checker).Import(context.Background(), "offline:nobody", body, "", "cli"); !errors.Is(err, ErrUnknownSource) {
		t.Fatalf("import for a source no component uses: %v", err)
	}
}

// A refused import (bad signature, unsigned under a pin, rollback,
// malformed) answers why, in the kinds a fetch failure has, writes nothing:
// the stored document and the results stay, and the source records no
// error (its publisher did not fail).
func TestImportRefusedKeepsStoredDocument(t *testing.T) {
	t.Parallel()
	b := setup(t)
	priv := b.offlineSite()
	_, otherPriv := generateKey(t)
	good := doc(10, map[string]string{"core": pkgCore, "blog": pkgBlog, "forms": pkgUpToDate})
	if res := b.importDoc(offlineURL, good, updatedoc.Sign(good, priv)); res.Status != Imported {
		t.Fatalf("first import = %+v", res)
	}
	newer := doc(11, map[string]string{"core": pkgUpToDate, "blog": pkgUpToDate, "forms": pkgUpToDate})
	older := doc(9, map[string]string{"core": pkgUpToDate, "blog": pkgUpToDate, "forms": pkgUpToDate})
	for _, tc := range []struct {
		name string
		body []byte
		sig  string
		kind string
		args *readmodel.FailureArgs // nil: any
	}{
		{"signed by another key", newer, updatedoc.Sign(newer, otherPriv), string(readmodel.ErrorBadSignature), nil},
		{"signature of other bytes", newer, updatedoc.Sign(good, priv), string(readmodel.ErrorBadSignature), nil},
		{"unsigned", newer, "", string(readmodel.ErrorUnsigned), nil},
		{"rollback", older, updatedoc.Sign(older, priv), string(readmodel.ErrorRollback), new(readmodel.RollbackArgs(9, 10))},
		{"malformed", []byte(`{"format": 1,`), updatedoc.Sign([]byte(`{"format": 1,`), priv), string(readmodel.ErrorMalformed), nil},
	} {
		res := b.importDoc(offlineURL, tc.body, tc.sig)
		if res.Status != ImportRefused || string(res.Kind) != tc.kind || (tc.args != nil && !reflect.DeepEqual(res.Args, *tc.args)) || res.Detail == "" {
			t.Fatalf("%s: import = %+v, want refused as %s %+v", tc.name, res, tc.kind, tc.args)
		}
		if s := b.source(offlineURL); s.Sequence != 10 || s.LastError != "" || s.ConsecutiveFailures != 0 {
			t.Fatalf("%s: source after a refused import = %+v, want sequence 10 kept and no error", tc.name, s)
		}
		if r := b.results()["blog"]; !r.Evaluated || !r.Security {
			t.Fatalf("%s: blog after a refused import = %+v, want the stored evaluation", tc.name, r)
		}
	}
	runs := b.runs()
	if len(runs) != 6 || runs[5] != "import:completed_with_failures" {
		t.Fatalf("history = %v, want each refusal recorded", runs)
	}
	// Too large for the fetcher is too large for an import.
	big := make([]byte, NewImporter(b.checker).Limit()+1)
	if res := b.importDoc(offlineURL, big, ""); res.Status != ImportRefused || res.Kind != readmodel.ErrorTooLarge {
		t.Fatalf("oversized import = %+v", res)
	}
	if res := b.importDoc(offlineURL, newer, updatedoc.Sign(newer, priv)); res.Status != Imported || res.Sequence != 11 {
		t.Fatalf("newer document = %+v", res)
	}
}

// While a check holds the lease an import answers busy at once: it does
// not wait, and writes nothing.
func TestImportWhileCheckRunsIsBusy(t *testing.T) {
	t.Parallel()
	b := setup(t)
	priv := b.offlineSite()
	acq, err := b.otherInstance().lease.Acquire(context.Background(), lease.Operator)
	if err != nil || acq.Outcome != lease.Acquired {
		t.Fatalf("acquire = %+v %v", acq, err)
	}
	body := doc(10, map[string]string{"core": pkgCore, "blog": pkgBlog, "forms": pkgUpToDate})
	start := time.Now()
	res := b.importDoc(offlineURL, body, updatedoc.Sign(body, priv))
	if res.Status != ImportBusy {
		t.Fatalf("import while a check runs = %+v, want busy", res)
	}
	if d := time.Since(start); d > lease.Timings(testkit.Timings()).Lease/2 {
		t.Fatalf("busy import took %s: it waited", d)
	}
	var rows int
	b.db.QueryRow(t, "SELECT count(*) FROM sources WHERE url = $1", offlineURL).Scan(&rows)
	if rows != 0 {
		t.Fatal("a busy import wrote the source")
	}
	if got := b.runs(); len(got) != 1 || got[0] != "import:busy" {
		t.Fatalf("history = %v", got)
	}
}

// A check never fetches an offline source, nor counts it failed: it has
// nothing to fetch. Never imported, the source waits for its first import
// (stale, not failing, no error).
func TestCheckLeavesOfflineSourcesAlone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	p.Set("/core.json", doc(1, map[string]string{"core": pkgCore}))
	b.sync(
		manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json"},
		manifest.Component{Code: "blog", Name: "Blog", Version: "2.3.0", Source: offlineURL},
	)
	res := b.run(lease.Operator)
	if res.Status != Completed || res.Sources != 1 || res.Fetched != 1 || res.Failed != 0 || res.Skipped != 0 || res.Offline != 1 {
		t.Fatalf("check = %s, want one source fetched, one offline left alone", resultJSON(res))
	}
	var rows int
	b.db.QueryRow(t, "SELECT count(*) FROM sources WHERE url = $1", offlineURL).Scan(&rows)
	if rows != 0 {
		t.Fatal("the check wrote a row for the offline source: it tried to fetch it")
	}
	var failing, stale, offline bool
	b.db.QueryRow(t, "SELECT failing, stale, offline FROM source_state WHERE url = $1", offlineURL).Scan(&failing, &stale, &offline)
	if failing || stale || !offline {
		t.Fatalf("offline source never imported: failing %v, stale %v, offline %v; want not stale before 48 hours", failing, stale, offline)
	}
	// 48 hours after its component was installed without an import, it is.
	b.db.MustExec(t, "UPDATE components SET created_at = clock_timestamp() - interval '48 hours 1 minute' WHERE code = 'blog'")
	b.db.QueryRow(t, "SELECT failing, stale, offline FROM source_state WHERE url = $1", offlineURL).Scan(&failing, &stale, &offline)
	if failing || !stale || !offline {
		t.Fatalf("offline source never imported for 48 hours: failing %v, stale %v, offline %v", failing, stale, offline)
	}
	sum, err := b.reads.Summary(context.Background())
	if err != nil || sum.FailingSources != 0 {
		t.Fatalf("summary = %+v %v, want no failing source", sum, err)
	}
}

// An offline source is stale only by its document's expiry: not by the 48
// hours without a fetch that make a fetched source stale.
func TestOfflineSourceStaleOnlyByExpiry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	p.Set("/core.json", doc(1, map[string]string{"core": pkgCore}))
	b.sync(
		manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json"},
		manifest.Component{Code: "blog", Name: "Blog", Version: "2.3.0", Source: offlineURL},
	)
	b.run(lease.Operator)
	if res := b.importDoc(offlineURL, doc(3, map[string]string{"blog": pkgBlog}), ""); res.Status != Imported {
		t.Fatalf("unsigned import for an unpinned source = %+v", res)
	}
	stale := func(url string) bool {
		var s bool
		b.db.QueryRow(t, "SELECT stale FROM source_state WHERE url = $1", url).Scan(&s)
		return s
	}
	if stale(offlineURL) || b.results()["blog"].Stale {
		t.Fatal("a freshly imported offline source is stale")
	}
	// Ten days without a success: the fetched source is stale, the offline
	// one is not, while its document has not expired.
	b.db.MustExec(t, "UPDATE sources SET last_success_at = clock_timestamp() - interval '10 days'")
	if !stale(p.URL+"/core.json") || !b.results()["core"].Stale {
		t.Fatal("a fetched source ten days without success is not stale")
	}
	if stale(offlineURL) || b.results()["blog"].Stale {
		t.Fatal("an offline source is stale by the fetch age")
	}
	b.db.MustExec(t, "UPDATE sources SET expires_at = clock_timestamp() - interval '1 minute' WHERE url = $1", offlineURL)
	if !stale(offlineURL) || !b.results()["blog"].Stale {
		t.Fatal("an offline source whose document expired is not stale")
	}
}
