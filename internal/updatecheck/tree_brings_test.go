package updatecheck

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/lockfile"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/npmreg"
	"github.com/upcheck/upcheck/internal/testing/verdaccio"
)

// changesOf are what the lockfile changes to name brought, newest first.
func (b *bundle) changesOf(name string) []readmodel.PackageChange {
	b.t.Helper()
	cs, err := b.store.PackageChanges(context.Background(), store.LocalSite, name, 10)
	if err != nil {
		b.t.Fatal(err)
	}
	return cs
}

// syncLockfile reads the lockfile at path as the lockfile sync does and
// stores its tree.
func (b *bundle) syncLockfile(path string) {
	b.t.Helper()
	l, err := lockfile.Read(path, lockfile.Options{})
	if err != nil {
		b.t.Fatal(err)
	}
	syncTree(b.t, b, path, l.Tree)
}

// The axios shape, installed: a site's lockfile, rewritten by the real
// npm client (npm update) on the tests' Verdaccio, moves lib from 1.0.0 to
// 1.1.0, which adds a postinstall and a dependency published seconds
// before it, which npm brings in with a postinstall of its own; calm
// moves to a release that changes nothing. The next check says on lib
// what its change brought (the script, the young dependency), on
// young-dep what it brought in (its script, its age), nothing on calm,
// and tells each signal once per channel (trust_downgrade, tree); the
// first tree read is the baseline, no change; a later check reads
// nothing again.
func TestALockfileChangeBringsSignals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	reg := verdaccio.Start(t)
	token := reg.AddUser(t, "publisher")
	publish := func(name, version string, fields map[string]any) {
		reg.Publish(t, token, verdaccio.Package{Name: name, Version: version, Fields: fields})
	}
	publish("lib", "1.0.0", nil)
	publish("calm", "1.0.0", nil)
	lock := reg.Lock(t, "npm", verdaccio.Site{"dependencies": {"lib": "^1.0.0", "calm": "^1.0.0"}})
	regs, err := npm.LoadRegistries(reg.URL, "", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	b.checker.UseNpm(&npm.Client{Fetcher: b.fetcher, Registries: regs})
	b.db.MustExec(t, `INSERT INTO notification_channels (name, kind, target, events) VALUES ('ops', 'webhook', 'https://hooks.example/x', 'security')`)
	n, err := notify.New(b.db.Pool, b.store, b.fetcher, notify.DefaultTimings(), slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	b.checker.NotifyWith(n)
	b.syncLockfile(lock)
	if got := b.count(`SELECT count(*) FROM tree_brings`); got != 0 {
		t.Fatalf("the first tree read recorded %d changes; it is the baseline", got)
	}

	publish("young-dep", "1.0.0", map[string]any{"scripts": map[string]string{"postinstall": "node steal.js"}})
	publish("lib", "1.1.0", map[string]any{"dependencies": map[string]string{"young-dep": "^1.0.0"},
		"scripts": map[string]string{"postinstall": "node setup.js", "test": "node test.js"}})
	publish("calm", "1.0.1", nil)
	reg.Run(t, "npm", filepath.Dir(lock), "update", "--package-lock-only", "--ignore-scripts")
	b.syncLockfile(lock)
	if res := b.run(lease.Operator); !res.Status.RanToEnd() {
		t.Fatalf("check: %+v", res)
	}

	lib := b.changesOf("lib")
	if len(lib) != 1 || lib[0].State != readmodel.ChangeRead || lib[0].Compared != "1.0.0" || lib[0].Version != "1.1.0" {
		t.Fatalf("lib's change: %+v", lib)
	}
	if k := kindsOf(lib[0].Signals); !equalKinds(k, []readmodel.SignalKind{readmodel.SignalInstallScript, readmodel.SignalYoungDependency}) {
		t.Errorf("lib's signals %v", k)
	} else {
		if got := readmodel.SignalText(lib[0].Signals[0]); got != `1.1.0 adds a postinstall script: "node setup.js"` {
			t.Errorf("lib's script said %q", got)
		}
		if got := readmodel.SignalText(lib[0].Signals[1]); !strings.HasPrefix(got, "1.1.0 adds young-dep 1.0.0, a package first published ") {
			t.Errorf("lib's young dependency said %q", got)
		}
	}
	young := b.changesOf("young-dep")
	if len(young) != 1 || young[0].State != readmodel.ChangeRead || young[0].Compared != "" || readmodel.ChangeText(young[0]) != "brought in 1.0.0" {
		t.Fatalf("young-dep's change: %+v", young)
	}
	if k := kindsOf(young[0].Signals); !equalKinds(k, []readmodel.SignalKind{readmodel.SignalInstallScript, readmodel.SignalYoungDependency}) {
		t.Errorf("young-dep's signals %v", k)
	} else if got := readmodel.SignalText(young[0].Signals[1]); !strings.HasPrefix(got, "the lockfile brought in young-dep 1.0.0, a package first published ") {
		t.Errorf("young-dep's age said %q", got)
	}
	calm := b.changesOf("calm")
	if len(calm) != 1 || calm[0].State != readmodel.ChangeRead || len(calm[0].Signals) != 0 || calm[0].Compared != "1.0.0" {
		t.Fatalf("calm's change: %+v", calm)
	}
	if !strings.HasPrefix(readmodel.ChangeReadText(calm[0]), "It brought none of the signals") {
		t.Errorf("calm's change said %q", readmodel.ChangeReadText(calm[0]))
	}
	events := func() int {
		return b.count(`SELECT count(*) FROM notification_events WHERE type = 'trust_downgrade' AND payload->>'tree' = 'true'`)
	}
	if got := events(); got != 4 {
		t.Errorf("%d trust_downgrade events of the tree, want 4 (two signals each of lib and young-dep)", got)
	}

	// A later check reads nothing again and tells nothing again.
	read := lib[0].ReadAt
	b.run(lease.Operator)
	if again := b.changesOf("lib"); len(again) != 1 || again[0].ReadAt == nil || !again[0].ReadAt.Equal(*read) {
		t.Errorf("lib's change read again: %+v", again)
	}
	if got := events(); got != 4 {
		t.Errorf("%d events after a second check, want the same 4", got)
	}
}

// On crafted documents: a benign change (calm adds follow, a package
// years old, and npm brings follow in) raises nothing; changes past the
// check's bound of documents (UPCHECK_NPM_CHANGE_DOCUMENTS) are said not
// read, never "nothing", and a later check reads them; a change whose
// package's document cannot be read is said not read either.
func TestALockfileChangeBenignOrNotRead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := npmreg.New(t)
	at := func(d int) time.Time { return time.Date(2026, 3, d, 9, 0, 0, 0, time.UTC) }
	old := time.Date(2019, 5, 1, 0, 0, 0, 0, time.UTC)
	r.Publish("follow", "1.0.0", map[string]npmreg.Version{"1.0.0": {Published: old}})
	r.Publish("calm", "1.1.0", map[string]npmreg.Version{
		"1.0.0": {Published: at(2)}, "1.1.0": {Published: at(15), Dependencies: map[string]string{"follow": "^1.0.0"}}})
	for _, name := range []string{"x1", "x2"} {
		r.Publish(name, "1.1.0", map[string]npmreg.Version{
			"1.0.0": {Published: at(2)}, "1.1.0": {Published: at(15), Scripts: map[string]string{"postinstall": "node x.js"}}})
	}
	b.useRegistry(r)
	b.putTree(nil, "node_modules/calm 1.0.0", "node_modules/x1 1.0.0", "node_modules/x2 1.0.0")
	b.putTree(nil, "node_modules/calm 1.1.0", "node_modules/follow 1.0.0", "node_modules/x1 1.1.0", "node_modules/x2 1.1.0",
		"node_modules/zz 1.0.0")
	b.checker.LimitChangeDocuments(2)
	b.run(lease.Operator)

	for _, name := range []string{"calm", "follow"} {
		c := b.changesOf(name)
		if len(c) != 1 || c[0].State != readmodel.ChangeRead || len(c[0].Signals) != 0 || len(c[0].UnreadDependencies) != 0 {
			t.Errorf("%s's change: %+v, want read, bringing nothing", name, c)
		}
	}
	for _, name := range []string{"x1", "x2", "zz"} {
		c := b.changesOf(name)
		if len(c) != 1 || c[0].State != readmodel.ChangeUnread || c[0].Unread != readmodel.UnreadPastBound || len(c[0].Signals) != 0 {
			t.Fatalf("%s's change: %+v, want not read, past the bound", name, c)
		}
		if got := readmodel.ChangeReadText(c[0]); !strings.HasPrefix(got, "Not read: the check had read as many") {
			t.Errorf("%s's change said %q", name, got)
		}
	}
	if n := r.Count("/x1"); n != 0 {
		t.Errorf("x1's document fetched %d times past the bound", n)
	}

	b.checker.LimitChangeDocuments(DefaultChangeDocuments)
	b.run(lease.Operator)
	for _, name := range []string{"x1", "x2"} {
		c := b.changesOf(name)
		if len(c) != 1 || c[0].State != readmodel.ChangeRead || !slices.Equal(kindsOf(c[0].Signals), []readmodel.SignalKind{readmodel.SignalInstallScript}) {
			t.Errorf("%s's change after a check within the bound: %+v", name, c)
		}
	}
	// What a change brought is pruned with its interval of the history
	// (UPCHECK_TREE_HISTORY_RETENTION): x1, removed long ago, goes; x2,
	// installed now, stays.
	b.putTree(nil, "node_modules/calm 1.1.0", "node_modules/follow 1.0.0", "node_modules/x2 1.1.0", "node_modules/zz 1.0.0")
	b.db.MustExec(t, `UPDATE tree_versions SET installed_at = installed_at - interval '500 days', removed_at = removed_at - interval '450 days'
	                  WHERE name = 'x1' AND removed_at IS NOT NULL`)
	if _, err := b.store.TreeVersionsPurge(context.Background(), 400*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if c := b.changesOf("x1"); len(c) != 0 {
		t.Errorf("x1's change outlived its history: %+v", c)
	}
	if c := b.changesOf("x2"); len(c) != 1 {
		t.Errorf("x2's change: %+v", c)
	}
	// zz is in no registry: its document cannot be read.
	if c := b.changesOf("zz"); len(c) != 1 || c[0].State != readmodel.ChangeUnread || c[0].Unread != readmodel.UnreadFailed {
		t.Errorf("zz's change: %+v, want not read, failed", c)
	} else if got := readmodel.ChangeReadText(c[0]); !strings.HasPrefix(got, "Not read: its package document could not be read") {
		t.Errorf("zz's change said %q", got)
	}
}

// A check reads an added dependency's document once, whoever adds it:
// the offered update of the component calm and the lockfile change that
// installed the same release both add the young plain-crypto, whose
// document the registry is asked for once in that check.
func TestALockfileChangeSharesTheCheckDependencyDocuments(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := npmreg.New(t)
	at := func(d, h, m int) time.Time { return time.Date(2026, 3, d, h, m, 0, 0, time.UTC) }
	r.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	r.Publish("plain-crypto", "4.2.1", map[string]npmreg.Version{"4.2.1": {Published: at(31, 0, 20)}})
	r.Publish("calm", "1.1.0", map[string]npmreg.Version{
		"1.0.0": {Published: at(2, 9, 0)}, "1.1.0": {Published: at(31, 0, 41), Dependencies: map[string]string{"plain-crypto": "^4.2.0"}}})
	b.useRegistry(r)
	b.sync(manifest.Component{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"},
		manifest.Component{Code: "calm", Name: "calm", Version: "1.0.0", Source: "npm:calm"})
	b.putTree(nil, "node_modules/calm 1.0.0")
	b.putTree(nil, "node_modules/calm 1.1.0")
	b.run(lease.Operator)

	if k := kindsOf(b.bringsOf("calm")); !equalKinds(k, []readmodel.SignalKind{readmodel.SignalYoungDependency}) {
		t.Errorf("the offer's signals %v", k)
	}
	c := b.changesOf("calm")
	if len(c) != 1 || !equalKinds(kindsOf(c[0].Signals), []readmodel.SignalKind{readmodel.SignalYoungDependency}) {
		t.Fatalf("the change: %+v", c)
	}
	if n := r.Count("/plain-crypto"); n != 1 {
		t.Errorf("plain-crypto's document asked for %d times in one check, want once", n)
	}
}

// A change read while a dependency it adds could not be (past the check's
// bound of dependency documents, UPCHECK_NPM_DEPENDENCY_DOCUMENTS) says
// that dependency not read, and a later check within the bound reads the
// change again and says what it is: a young dependency.
func TestALockfileChangeWithAnUnreadDependencyIsReadAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := npmreg.New(t)
	at := func(d, h, m int) time.Time { return time.Date(2026, 3, d, h, m, 0, 0, time.UTC) }
	r.Publish("plain-crypto", "4.2.1", map[string]npmreg.Version{"4.2.1": {Published: at(31, 0, 20)}})
	r.Publish("calm", "1.1.0", map[string]npmreg.Version{
		"1.0.0": {Published: at(2, 9, 0)}, "1.1.0": {Published: at(31, 0, 41), Dependencies: map[string]string{"plain-crypto": "^4.2.0"}}})
	b.useRegistry(r)
	b.putTree(nil, "node_modules/calm 1.0.0")
	b.putTree(nil, "node_modules/calm 1.1.0")
	b.checker.LimitDependencyDocuments(0)
	b.run(lease.Operator)
	c := b.changesOf("calm")
	if len(c) != 1 || c[0].State != readmodel.ChangeRead || len(c[0].Signals) != 0 || len(c[0].UnreadDependencies) != 1 ||
		c[0].UnreadDependencies[0].Reason != readmodel.UnreadPastBound {
		t.Fatalf("calm's change past the dependencies' bound: %+v", c)
	}
	if got := readmodel.ChangeReadText(c[0]); got != "" {
		t.Errorf("calm's change said %q beside its unread dependency", got)
	}

	b.checker.LimitDependencyDocuments(DefaultDependencyDocuments)
	b.run(lease.Operator)
	c = b.changesOf("calm")
	if len(c) != 1 || !equalKinds(kindsOf(c[0].Signals), []readmodel.SignalKind{readmodel.SignalYoungDependency}) || len(c[0].UnreadDependencies) != 0 {
		t.Errorf("calm's change read again: %+v", c)
	}
}
