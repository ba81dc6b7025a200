package updatecheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/testing/npmreg"
)

// bringsOf reads the signals stored with code's result.
func (b *bundle) bringsOf(code string) []readmodel.Signal {
	b.t.Helper()
	var raw []byte
	b.db.QueryRow(b.t, `SELECT coalesce(registry_facts, '{}') FROM component_results WHERE code = $1`, code).Scan(&raw)
	var f readmodel.RegistryFacts
	if err := json.Unmarshal(raw, &f); err != nil {
		b.t.Fatal(err)
	}
	return f.Brings
}

func kindsOf(s []readmodel.Signal) []readmodel.SignalKind {
	var out []readmodel.SignalKind
	for _, x := range s {
		out = append(out, x.Kind)
	}
	return out
}

// The shapes of 2025–2026's supply-chain attacks, crafted on one
// registry (trusted publishing and provenance are fields Verdaccio cannot
// serve), each raise their signal beside the offered update, and the two
// benign controls raise nothing: the axios shape (a dependency first
// published minutes before the release), the TanStack shape (valid
// provenance, an optional git dependency, a prepare script), the
// Shai-Hulud shape (a postinstall added in a patch release), a burst of
// releases, trusted publishing lost within the major line; a dependency
// years old and provenance kept (naming the package's own repository,
// written another way) raise nothing. The TanStack shape's valid
// provenance names another repository than the package's.
func TestNpmUpdateBrings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := npmreg.New(t)
	at := func(d, h, m int) time.Time { return time.Date(2026, 3, d, h, m, 0, 0, time.UTC) }
	r.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	// axios: plain-crypto first published 41 minutes before ax 1.1.0.
	r.Publish("plain-crypto", "4.2.1", map[string]npmreg.Version{
		"4.2.0": {Published: at(31, 0, 0)}, "4.2.1": {Published: at(31, 0, 20), Scripts: map[string]string{"postinstall": "node setup.js"}}})
	r.Publish("@acme/ax", "1.1.0", map[string]npmreg.Version{
		"1.0.0": {Published: at(1, 9, 0), Dependencies: map[string]string{"follow": "^1.0.0"}},
		"1.1.0": {Published: at(31, 0, 41), Dependencies: map[string]string{"follow": "^1.0.0", "plain-crypto": "^4.2.0"}}})
	r.Publish("follow", "1.0.0", map[string]npmreg.Version{"1.0.0": {Published: time.Date(2019, 5, 1, 0, 0, 0, 0, time.UTC)}})
	// TanStack: provenance kept, naming another repository, an optional
	// git dependency, prepare.
	r.Publish("@acme/tan", "1.0.1", map[string]npmreg.Version{
		"1.0.0": {Published: at(2, 9, 0), Provenance: true},
		"1.0.1": {Published: at(11, 9, 0), Provenance: true, ProvenanceRepository: "https://git.example.test/acme-evil/tan",
			Optional: map[string]string{"setup": "github:acme-evil/setup#0abc"},
			Scripts:  map[string]string{"prepare": "node ./setup.mjs && echo \"<done>\"", "test": "vitest"}}})
	r.SetRepository("@acme/tan", map[string]any{"type": "git", "url": "git+https://git.example.test/acme/tan.git"})
	// Shai-Hulud: a postinstall added in a patch release.
	r.Publish("@acme/hulud", "1.0.1", map[string]npmreg.Version{
		"1.0.0": {Published: at(2, 9, 0), Scripts: map[string]string{"test": "jest"}},
		"1.0.1": {Published: at(12, 9, 0), Scripts: map[string]string{"test": "jest", "postinstall": "node bundle.js"}}})
	// A burst: seven versions within half an hour.
	burst := map[string]npmreg.Version{"1.0.0": {Published: at(1, 9, 0)}}
	for i, v := range []string{"1.0.1", "1.0.2", "1.0.3", "1.0.4", "1.0.5", "1.0.6", "1.0.7"} {
		burst[v] = npmreg.Version{Published: at(13, 9, 4*i)}
	}
	r.Publish("@acme/burst", "1.0.7", burst)
	// Trusted publishing lost against the installed version.
	r.Publish("@acme/tp", "1.1.0", map[string]npmreg.Version{
		"1.0.0": {Published: at(2, 9, 0), Provenance: true, Publisher: "ci", TrustedPublisher: true},
		"1.1.0": {Published: at(14, 9, 0), Provenance: true, Publisher: "ci"}})
	// Controls: a dependency added that is years old; provenance kept.
	r.Publish("@acme/calm", "1.1.0", map[string]npmreg.Version{
		"1.0.0": {Published: at(2, 9, 0)}, "1.1.0": {Published: at(15, 9, 0), Dependencies: map[string]string{"follow": "^1.0.0"}}})
	r.Publish("@acme/prov", "1.1.0", map[string]npmreg.Version{
		"1.0.0": {Published: at(2, 9, 0), Provenance: true},
		"1.1.0": {Published: at(15, 9, 0), Provenance: true, Dependencies: map[string]string{"follow": "^1.0.0"},
			ProvenanceRepository: "https://GIT.example.test/Acme/Prov"}})
	r.SetRepository("@acme/prov", "git+https://git.example.test/acme/prov.git")
	b.useRegistry(r)
	comps := []manifest.Component{{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"}}
	for _, name := range []string{"ax", "tan", "hulud", "burst", "tp", "calm", "prov"} {
		comps = append(comps, manifest.Component{Code: "acme--" + name, Name: name, Version: "1.0.0", Source: "npm:@acme/" + name})
	}
	b.sync(comps...)
	b.run(lease.Operator)

	want := map[string][]readmodel.SignalKind{
		"acme--ax":    {readmodel.SignalYoungDependency},
		"acme--tan":   {readmodel.SignalInstallScript, readmodel.SignalExoticSource, readmodel.SignalProvenanceRepository},
		"acme--hulud": {readmodel.SignalInstallScript},
		"acme--burst": {readmodel.SignalBurst},
		"acme--tp":    {readmodel.SignalTrustLower},
		"acme--calm":  nil,
		"acme--prov":  nil,
	}
	for code, kinds := range want {
		got := b.bringsOf(code)
		if !equalKinds(kindsOf(got), kinds) {
			t.Errorf("%s: signals %v, want %v", code, kindsOf(got), kinds)
		}
	}
	ax := b.bringsOf("acme--ax")
	if len(ax) == 1 {
		if got := readmodel.SignalText(ax[0]); got != "1.1.0 adds plain-crypto 4.2.1, a package first published 41 minutes before this release" {
			t.Errorf("ax: %q", got)
		}
	}
	tan := b.bringsOf("acme--tan")
	if len(tan) == 3 {
		if a := tan[0].Args; a.Name != "prepare" || !a.Added || a.Text != `node ./setup.mjs && echo "<done>"` || len(a.SHA256) != 64 {
			t.Errorf("tan's script: %+v", a)
		}
		if a := tan[1].Args; a.Name != "setup" || a.Section != "optionalDependencies" || a.Source != "github" {
			t.Errorf("tan's exotic source: %+v", a)
		}
		if got := readmodel.SignalText(tan[0]); !strings.Contains(got, `adds a prepare script: "node ./setup.mjs && echo \"<done>\""`) {
			t.Errorf("tan's script said %q", got)
		}
		if a := tan[2].Args; a.Version != "1.0.1" || a.Repository != "https://git.example.test/acme-evil/tan" ||
			a.PackageRepository != "https://git.example.test/acme/tan" {
			t.Errorf("tan's provenance: %+v", a)
		}
	}
	// The control's bundle was read, and names its own repository.
	if u := b.provenanceUnreadOf("acme--prov"); len(u) != 0 {
		t.Errorf("prov's provenance not read: %+v", u)
	}
	if tp := b.bringsOf("acme--tp"); len(tp) == 1 && (tp[0].Args.Trust != "provenance" || tp[0].Args.Was != "trusted_publishing" || tp[0].Args.Compared != "1.0.0") {
		t.Errorf("tp: %+v", tp[0].Args)
	}
	if bu := b.bringsOf("acme--burst"); len(bu) == 1 && bu[0].Args.Count != 7 {
		t.Errorf("burst: %+v", bu[0].Args)
	}
	// The dependency documents are fetched once per check, whoever adds
	// them (calm and prov both add follow: read once).
	if n := r.Count("/follow"); n != 1 {
		t.Errorf("follow's document fetched %d times in one check", n)
	}
}

func equalKinds(a, b []readmodel.SignalKind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A package stored without the manifest of the version installed now (a
// version installed since, older than any kept) is fetched whole again,
// not left at the registry's 304: what the update brings over the version
// installed now is then said.
func TestNpmUpdateBringsReadsAVersionInstalledSince(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := npmreg.New(t)
	r.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	script := map[string]string{"postinstall": "node bundle.js"}
	r.Publish("@acme/hulud", "1.0.2", map[string]npmreg.Version{"1.0.0": {Published: day(2)},
		"1.0.1": {Published: day(3), Scripts: script}, "1.0.2": {Published: day(4), Scripts: script}})
	b.useRegistry(r)
	core := manifest.Component{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"}
	b.sync(core, manifest.Component{Code: "acme--hulud", Name: "Hulud", Version: "1.0.1", Source: "npm:@acme/hulud"})
	b.run(lease.Operator)
	if got := b.bringsOf("acme--hulud"); len(got) != 0 {
		t.Fatalf("1.0.1 to 1.0.2, the same script: %v", kindsOf(got))
	}
	b.sync(core, manifest.Component{Code: "acme--hulud", Name: "Hulud", Version: "1.0.0", Source: "npm:@acme/hulud"})
	b.run(lease.Operator)
	if got := b.bringsOf("acme--hulud"); !equalKinds(kindsOf(got), []readmodel.SignalKind{readmodel.SignalInstallScript}) {
		t.Errorf("1.0.0 to 1.0.2 after the check: %v, want the postinstall", kindsOf(got))
	}
	// Fetched whole once: the next check takes the registry's 304 (one
	// request), with the manifests kept by the whole fetch.
	before := r.Count("/@acme%2fhulud")
	b.run(lease.Operator)
	if n := r.Count("/@acme%2fhulud") - before; n != 1 {
		t.Errorf("the check after the whole fetch asked for the document %d times, want 1 (the 304 taken)", n)
	}
	if got := b.bringsOf("acme--hulud"); !equalKinds(kindsOf(got), []readmodel.SignalKind{readmodel.SignalInstallScript}) {
		t.Errorf("1.0.0 to 1.0.2 after the 304: %v, want the postinstall", kindsOf(got))
	}
}

// dependencyRow is what is stored of name's document: whether a row is,
// its validator, how many versions' times and when it was read.
func (b *bundle) dependencyRow(name string) (stored bool, etag string, versions int, readAt time.Time) {
	b.t.Helper()
	err := b.db.Pool.QueryRow(context.Background(), `SELECT etag, (SELECT count(*) FROM jsonb_object_keys(published)), read_at
		FROM npm_dependencies WHERE name = $1`, name).Scan(&etag, &versions, &readAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, "", 0, time.Time{}
	}
	if err != nil {
		b.t.Fatal(err)
	}
	return true, etag, versions, readAt
}

// What a check reads of an added dependency's document is stored with its
// validator: the next check does not ask again for a dependency whose
// stored first publish time already says it is not young, asks
// conditionally for a young one (the registry's 304 writes nothing and
// the signal stays), and a result evaluated again without a check (a
// manifest sync) says the young dependency from the stored facts.
func TestNpmUpdateBringsStoresItsDependencies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := npmreg.New(t)
	at := func(d, h, m int) time.Time { return time.Date(2026, 3, d, h, m, 0, 0, time.UTC) }
	r.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	r.Publish("plain-crypto", "4.2.1", map[string]npmreg.Version{
		"4.2.0": {Published: at(31, 0, 0)}, "4.2.1": {Published: at(31, 0, 20)}})
	r.Publish("follow", "1.0.0", map[string]npmreg.Version{"1.0.0": {Published: time.Date(2019, 5, 1, 0, 0, 0, 0, time.UTC)}})
	r.Publish("@acme/ax", "1.1.0", map[string]npmreg.Version{
		"1.0.0": {Published: at(1, 9, 0)},
		"1.1.0": {Published: at(31, 0, 41), Dependencies: map[string]string{"follow": "^1.0.0", "plain-crypto": "^4.2.0"}}})
	b.useRegistry(r)
	core := manifest.Component{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"}
	ax := manifest.Component{Code: "acme--ax", Name: "Ax", Version: "1.0.0", Source: "npm:@acme/ax"}
	b.sync(core, ax)
	b.run(lease.Operator)
	young := []readmodel.SignalKind{readmodel.SignalYoungDependency}
	if got := b.bringsOf("acme--ax"); !equalKinds(kindsOf(got), young) || got[0].Args.DependencyVersion != "4.2.1" {
		t.Fatalf("first check: %+v", got)
	}
	stored, etag, versions, readAt := b.dependencyRow("plain-crypto")
	if !stored || etag == "" || versions != 2 {
		t.Errorf("plain-crypto stored %v, etag %q, %d versions' times; want its validator and its 2 versions", stored, etag, versions)
	}
	// An old package's versions are never said: only its first publish
	// time is kept.
	if stored, etag, versions, _ := b.dependencyRow("follow"); !stored || etag == "" || versions != 0 {
		t.Errorf("follow stored %v, etag %q, %d versions' times; want its validator and none", stored, etag, versions)
	}

	follow, plain := r.Count("/follow"), r.Count("/plain-crypto")
	b.run(lease.Operator)
	if n := r.Count("/follow") - follow; n != 0 {
		t.Errorf("the next check asked for follow's document %d times; its stored first publish time decides", n)
	}
	if n := r.Count("/plain-crypto") - plain; n != 1 {
		t.Errorf("the next check asked for plain-crypto's document %d times, want 1 (conditionally)", n)
	}
	if _, _, _, again := b.dependencyRow("plain-crypto"); !again.Equal(readAt) {
		t.Errorf("the registry's 304 wrote plain-crypto's row again (read at %v, then %v)", readAt, again)
	}
	if got := b.bringsOf("acme--ax"); !equalKinds(kindsOf(got), young) {
		t.Errorf("after the 304: %v", kindsOf(got))
	}

	// A manifest sync evaluates ax again (its policy changed) without a
	// check: the young dependency is said from the stored facts.
	ax.Policy = release.Policy{Offer: release.OfferMinor}
	b.sync(core, ax)
	if got := b.bringsOf("acme--ax"); !equalKinds(kindsOf(got), young) || got[0].Args.DependencyVersion != "4.2.1" {
		t.Errorf("evaluated again by the sync: %+v", got)
	}
	if u := b.unreadOf("acme--ax"); len(u) != 0 {
		t.Errorf("evaluated again by the sync, unread: %+v", u)
	}
}

// unreadOf reads the added dependencies stored as not read with code's
// result.
func (b *bundle) unreadOf(code string) []readmodel.UnreadDependency {
	b.t.Helper()
	var raw []byte
	b.db.QueryRow(b.t, `SELECT coalesce(registry_facts, '{}') FROM component_results WHERE code = $1`, code).Scan(&raw)
	var f readmodel.RegistryFacts
	if err := json.Unmarshal(raw, &f); err != nil {
		b.t.Fatal(err)
	}
	return f.BringsUnread
}

// Past the check's bound of dependency documents, an added dependency
// never read is said not read (never silently absent), and the next
// check reads it before asking again for one it read.
func TestNpmUpdateBringsPastTheBoundSaysNotRead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.checker.LimitDependencyDocuments(1)
	r := npmreg.New(t)
	at := func(d, h, m int) time.Time { return time.Date(2026, 3, d, h, m, 0, 0, time.UTC) }
	r.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	r.Publish("young-a", "1.0.0", map[string]npmreg.Version{"1.0.0": {Published: at(30, 0, 0)}})
	r.Publish("young-b", "1.0.0", map[string]npmreg.Version{"1.0.0": {Published: at(30, 0, 0)}})
	r.Publish("@acme/ax", "1.1.0", map[string]npmreg.Version{
		"1.0.0": {Published: at(1, 9, 0)},
		"1.1.0": {Published: at(31, 0, 41), Dependencies: map[string]string{"young-a": "^1.0.0", "young-b": "^1.0.0"}}})
	b.useRegistry(r)
	b.sync(manifest.Component{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"},
		manifest.Component{Code: "acme--ax", Name: "Ax", Version: "1.0.0", Source: "npm:@acme/ax"})
	b.run(lease.Operator)
	signals, unread := b.bringsOf("acme--ax"), b.unreadOf("acme--ax")
	if len(signals) != 1 || signals[0].Kind != readmodel.SignalYoungDependency || len(unread) != 1 ||
		unread[0].Reason != readmodel.UnreadPastBound || unread[0].Name == signals[0].Args.Name {
		t.Fatalf("bound 1, two young dependencies: signals %+v, unread %+v; want one of each", signals, unread)
	}
	if got := readmodel.UnreadText(unread[0]); !strings.Contains(got, "whose age is not known") {
		t.Errorf("said %q", got)
	}
	b.run(lease.Operator)
	if got := b.bringsOf("acme--ax"); len(got) != 2 {
		t.Errorf("the next check: %v, want both young dependencies (the unread one read first)", kindsOf(got))
	}
	if u := b.unreadOf("acme--ax"); len(u) != 0 {
		t.Errorf("the next check, unread: %+v", u)
	}
}

// provenanceUnreadOf reads the offered versions whose provenance's
// repository was not compared, stored with code's result.
func (b *bundle) provenanceUnreadOf(code string) []readmodel.ProvenanceUnread {
	b.t.Helper()
	var raw []byte
	b.db.QueryRow(b.t, `SELECT coalesce(registry_facts, '{}') FROM component_results WHERE code = $1`, code).Scan(&raw)
	var f readmodel.RegistryFacts
	if err := json.Unmarshal(raw, &f); err != nil {
		b.t.Fatal(err)
	}
	return f.ProvenanceUnread
}

// A version's provenance whose attestation bundle could not be fetched is
// said not read, never as naming the package's repository; the next check
// reads it and says the repository it names, stores it, and no later
// check fetches it again (a published version's attestations do not
// change); a result evaluated again without a check (a manifest sync)
// says it from what is stored.
func TestNpmUpdateBringsProvenanceNotRead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := npmreg.New(t)
	r.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	r.Publish("@acme/tan", "1.0.1", map[string]npmreg.Version{
		"1.0.0": {Published: day(2), Provenance: true},
		"1.0.1": {Published: day(3), Provenance: true, ProvenanceRepository: "https://git.example.test/acme-evil/tan"}})
	r.SetRepository("@acme/tan", "git+https://git.example.test/acme/tan.git")
	r.FailBundles(true)
	b.useRegistry(r)
	core := manifest.Component{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"}
	tan := manifest.Component{Code: "acme--tan", Name: "Tan", Version: "1.0.0", Source: "npm:@acme/tan"}
	b.sync(core, tan)
	b.run(lease.Operator)
	if got := b.bringsOf("acme--tan"); len(got) != 0 {
		t.Errorf("the bundle failed: signals %v, want none", kindsOf(got))
	}
	u := b.provenanceUnreadOf("acme--tan")
	if len(u) != 1 || u[0].Version != "1.0.1" || u[0].Reason != readmodel.ProvenanceFailed {
		t.Fatalf("the bundle failed: not read %+v, want 1.0.1 failed", u)
	}
	if got := readmodel.ProvenanceUnreadText(u[0]); !strings.Contains(got, "not compared") {
		t.Errorf("said %q", got)
	}

	r.FailBundles(false)
	b.run(lease.Operator)
	want := []readmodel.SignalKind{readmodel.SignalProvenanceRepository}
	if got := b.bringsOf("acme--tan"); !equalKinds(kindsOf(got), want) {
		t.Errorf("the bundle read: signals %v, want %v", kindsOf(got), want)
	}
	if u := b.provenanceUnreadOf("acme--tan"); len(u) != 0 {
		t.Errorf("the bundle read: not read %+v", u)
	}
	bundle := "/-/npm/v1/attestations/@acme/tan@1.0.1"
	asked := r.Count(bundle)
	b.run(lease.Operator)
	if n := r.Count(bundle) - asked; n != 0 {
		t.Errorf("a check after the bundle was read fetched it %d times again", n)
	}
	if got := b.bringsOf("acme--tan"); !equalKinds(kindsOf(got), want) {
		t.Errorf("from the stored bundle: signals %v, want %v", kindsOf(got), want)
	}
	tan.Policy = release.Policy{Offer: release.OfferMinor}
	b.sync(core, tan)
	if got := b.bringsOf("acme--tan"); !equalKinds(kindsOf(got), want) {
		t.Errorf("evaluated again by the sync: signals %v, want %v", kindsOf(got), want)
	}
}

// A burst across a scope: two components of one scope and a dependency of
// the same scope one of them adds, two versions each within an hour (six
// in all, more than npm.BurstVersions; two of any one package), raise a
// burst on each offered update, counted across the scope's packages the
// check read; the next check and a result evaluated again without a check
// (a manifest sync) keep it. A monorepo's ordinary release (one version
// of each of seven packages of a scope within minutes) raises none.
func TestNpmUpdateBringsScopeBurst(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := npmreg.New(t)
	at := func(d, h, m int) time.Time { return time.Date(2026, 5, d, h, m, 0, 0, time.UTC) }
	r.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	r.Publish("@tan/a", "1.0.2", map[string]npmreg.Version{"1.0.0": {Published: at(1, 9, 0)},
		"1.0.1": {Published: at(11, 9, 0)}, "1.0.2": {Published: at(11, 9, 6)}})
	r.Publish("@tan/b", "1.0.2", map[string]npmreg.Version{"1.0.0": {Published: at(1, 9, 0)},
		"1.0.1": {Published: at(11, 9, 2)}, "1.0.2": {Published: at(11, 9, 8), Dependencies: map[string]string{"@tan/helper": "^1.0.0"}}})
	r.Publish("@tan/helper", "1.0.1", map[string]npmreg.Version{"1.0.0": {Published: at(11, 9, 1)}, "1.0.1": {Published: at(11, 9, 4)}})
	// Another scope's release in the same minutes is not counted.
	r.Publish("@other/c", "1.0.1", map[string]npmreg.Version{"1.0.0": {Published: at(1, 9, 0)}, "1.0.1": {Published: at(11, 9, 3)}})
	b.useRegistry(r)
	core := manifest.Component{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"}
	comps := []manifest.Component{core,
		{Code: "tan--a", Name: "A", Version: "1.0.0", Source: "npm:@tan/a"},
		{Code: "tan--b", Name: "B", Version: "1.0.0", Source: "npm:@tan/b"},
		{Code: "other--c", Name: "C", Version: "1.0.0", Source: "npm:@other/c"}}
	want := map[string][]readmodel.SignalKind{
		"tan--a":   {readmodel.SignalBurst},
		"tan--b":   {readmodel.SignalYoungDependency, readmodel.SignalBurst},
		"other--c": nil,
	}
	for i := range 7 {
		name := fmt.Sprintf("p%d", i)
		r.Publish("@mono/"+name, "1.0.1", map[string]npmreg.Version{"1.0.0": {Published: at(1, 9, 0)}, "1.0.1": {Published: at(11, 9, i)}})
		comps = append(comps, manifest.Component{Code: "mono--" + name, Name: name, Version: "1.0.0", Source: "npm:@mono/" + name})
		want["mono--"+name] = nil
	}
	b.sync(comps...)
	check := func(when string) {
		t.Helper()
		for code, want := range want {
			got := b.bringsOf(code)
			if !equalKinds(kindsOf(got), want) {
				t.Errorf("%s: %s: signals %v, want %v", when, code, kindsOf(got), want)
				continue
			}
			if len(got) > 0 {
				burst := got[len(got)-1]
				if a := burst.Args; a.Count != 6 || a.Scope != "@tan" || a.Version != "1.0.2" {
					t.Errorf("%s: %s: burst %+v, want 6 versions of @tan", when, code, a)
				}
				if s := readmodel.SignalText(burst); s != "1.0.2 is one of 6 versions of the packages of @tan read by the check published within 1 hour" {
					t.Errorf("%s: %s said %q", when, code, s)
				}
			}
		}
	}
	b.run(lease.Operator)
	check("the first check")
	b.run(lease.Operator)
	check("the next check")
	comps[1].Policy = release.Policy{Offer: release.OfferMinor}
	b.sync(comps...)
	check("evaluated again by the sync")
}
