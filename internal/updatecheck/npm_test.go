package updatecheck

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/npmreg"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// useRegistry makes b's checker read npm sources from r.
func (b *bundle) useRegistry(r *npmreg.Registry) {
	u, err := npm.ParseRegistryURL(r.URL)
	if err != nil {
		b.t.Fatal(err)
	}
	b.checker.UseNpm(&npm.Client{Fetcher: b.fetcher, Registries: npm.Registries{Default: u}, MaxDocument: 1 << 20})
}

func (b *bundle) catalogRow(code string) readmodel.CatalogRow {
	b.t.Helper()
	rows, _, err := b.store.CatalogRows(context.Background(), readmodel.DevSeparate)
	if err != nil {
		b.t.Fatal(err)
	}
	for _, r := range rows {
		if r.Code == code {
			return r.CatalogRow
		}
	}
	b.t.Fatalf("no catalog row %q", code)
	return readmodel.CatalogRow{}
}

func (b *bundle) auditActions() []string {
	b.t.Helper()
	events, err := b.store.AuditEvents(context.Background(), "", 100, 0)
	if err != nil {
		b.t.Fatal(err)
	}
	var out []string
	for _, e := range events {
		out = append(out, e.Action)
	}
	return out
}

func day(n int) time.Time { return time.Date(2026, 1, n, 12, 0, 0, 0, time.UTC) }

// npmSite is a core and three plugins served by r: blog has an update
// that lost the provenance its installed version had and a newer release
// that needs a newer core; old is deprecated; gone is not published.
func npmSite(b *bundle, r *npmreg.Registry) {
	r.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	r.Publish("@acme/blog", "2.0.0", map[string]npmreg.Version{
		"1.0.0": {Published: day(2), Provenance: true},
		"1.1.0": {Published: day(3)},
		"1.2.0": {Published: day(4), Tamper: true},
		"2.0.0": {Published: day(5), Provenance: true, Peers: map[string]string{"@acme/core": ">=3.0.0"}},
	})
	r.Publish("old-widget", "1.0.0", map[string]npmreg.Version{"1.0.0": {Published: day(2), Deprecated: "use @acme/widget"}})
	b.useRegistry(r)
	b.sync(
		manifest.Component{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"},
		manifest.Component{Code: "acme--blog", Name: "Blog", Version: "1.0.0", Source: "npm:@acme/blog"},
		manifest.Component{Code: "old-widget", Name: "Old widget", Version: "1.0.0", Source: "npm:old-widget"},
		manifest.Component{Code: "gone", Name: "Gone", Version: "1.0.0", Source: "npm:@acme/gone"},
	)
}

func TestNpmSourcesAreChecked(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := npmreg.New(t)
	npmSite(b, r)

	res := b.run(lease.Operator)
	if res.Status != CompletedWithFailures || res.Fetched != 3 || res.Failed != 1 {
		t.Fatalf("first check: %+v, want 3 fetched and the missing package failed", res)
	}
	blog := b.catalogRow("acme--blog")
	if blog.SourceKind != readmodel.SourceNpm || blog.Package != "@acme/blog" {
		t.Errorf("blog: kind %q package %q", blog.SourceKind, blog.Package)
	}
	// 1.2.0's signature fails: never offered; 2.0.0 needs core >= 3.
	if !blog.UpdateAvailable || blog.UpdateVersion != "1.1.0" || !blog.NeedsNewerCore || blog.RequiredCore != ">=3.0.0" {
		t.Errorf("blog: update %v %q, needs newer core %v %q", blog.UpdateAvailable, blog.UpdateVersion, blog.NeedsNewerCore, blog.RequiredCore)
	}
	if blog.UpdateCommand != "npm install @acme/blog@1.1.0" {
		t.Errorf("blog: update command %q", blog.UpdateCommand)
	}
	// The update the site can install lost the installed version's
	// provenance (2.0.0, which has it, needs a newer core).
	if blog.ProvenanceLost != "1.1.0" {
		t.Errorf("blog: provenance lost %q, want 1.1.0", blog.ProvenanceLost)
	}
	old := b.catalogRow("old-widget")
	if old.Deprecated != "use @acme/widget" || old.UpdateAvailable {
		t.Errorf("old-widget: deprecated %q, update %v", old.Deprecated, old.UpdateAvailable)
	}
	gone := b.catalogRow("gone")
	if gone.LastErrorKind != string(readmodel.ErrorNoSuchPackage) {
		t.Errorf("gone: failure kind %q, want %s", gone.LastErrorKind, readmodel.ErrorNoSuchPackage)
	}
	d, err := b.reads.Detail(context.Background(), "acme--blog")
	if err != nil {
		t.Fatal(err)
	}
	if d.Registry == nil || !d.Registry.KeysPublished || len(d.Registry.Refused) != 1 || d.Registry.Refused[0].Version != "1.2.0" {
		t.Fatalf("blog's registry facts: %+v", d.Registry)
	}
	for _, v := range d.Registry.Versions {
		if v.SignedBy != r.KeyID() || v.Published.IsZero() {
			t.Errorf("blog %s: signed by %q, published %v", v.Version, v.SignedBy, v.Published)
		}
		if v.Version == "1.0.0" && (!v.Installed || !v.Provenance) {
			t.Errorf("blog 1.0.0: %+v, want installed with provenance", v)
		}
	}
	sum, err := b.store.Summary(context.Background(), store.LocalSite, readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Deprecated != 1 || sum.TrustDowngrades != 1 || sum.UnsignedSources != 0 {
		t.Errorf("summary: deprecated %d, trust downgrades %d, unsigned %d", sum.Deprecated, sum.TrustDowngrades, sum.UnsignedSources)
	}
	if got := b.auditActions(); strings.Count(strings.Join(got, " "), string(readmodel.AuditRegistryKeysPin)) != 1 {
		t.Errorf("audit %v, want the registry's keys pinned once", got)
	}

	// The next check: every package answers 304.
	res = b.run(lease.Operator)
	if res.NotModified != 3 || res.Fetched != 0 {
		t.Fatalf("second check: %+v, want 3 not modified", res)
	}
	if got := b.catalogRow("acme--blog"); got.UpdateVersion != "1.1.0" {
		t.Errorf("after a 304: blog's update %q", got.UpdateVersion)
	}
}

func TestNpmKeyChangeIsATrustEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := npmreg.New(t)
	npmSite(b, r)
	b.run(lease.Operator)
	r.Rotate()
	b.run(lease.Operator)
	if got := b.auditActions(); !strings.Contains(strings.Join(got, " "), string(readmodel.AuditRegistryKeysChange)) {
		t.Errorf("audit %v, want the registry's key change", got)
	}
	health, err := b.store.SourceHealth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range health {
		if s.Kind == readmodel.SourceNpm && s.URL != "npm:@acme/gone" && (s.KeysChangedAt == nil || len(s.RegistryKeys) != 1 || s.RegistryKeys[0] != r.KeyID()) {
			t.Errorf("%s: keys %v changed at %v, want the new key", s.URL, s.RegistryKeys, s.KeysChangedAt)
		}
	}
	// Versions are verified with the new key: the update is still offered.
	if got := b.catalogRow("acme--blog"); got.UpdateVersion != "1.1.0" {
		t.Errorf("after the key change: blog's update %q", got.UpdateVersion)
	}
}

func TestNpmUpgradeOutOfBandIsEvaluatedAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := npmreg.New(t)
	npmSite(b, r)
	b.run(lease.Operator)
	before := r.Count("/@acme%2fblog")
	// The site upgraded blog to 1.1.0 outside upcheck: the sync evaluates
	// it from the stored package, with no fetch.
	b.sync(
		manifest.Component{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"},
		manifest.Component{Code: "acme--blog", Name: "Blog", Version: "1.1.0", Source: "npm:@acme/blog"},
		manifest.Component{Code: "old-widget", Name: "Old widget", Version: "1.0.0", Source: "npm:old-widget"},
	)
	blog := b.catalogRow("acme--blog")
	if !blog.Evaluated || blog.UpdateAvailable || blog.Installed != "1.1.0" {
		t.Errorf("after the upgrade: evaluated %v, update %v %q", blog.Evaluated, blog.UpdateAvailable, blog.UpdateVersion)
	}
	if r.Count("/@acme%2fblog") != before {
		t.Error("the sync fetched the package")
	}
}

func TestNpmSourceNeedsARegistry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := NewSyncer(b.checker).Sync(context.Background(), &manifest.Manifest{Components: []manifest.Component{
		{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"},
	}})
	if err == nil || !strings.Contains(err.Error(), "UPCHECK_NPM_REGISTRY") || !strings.Contains(err.Error(), `components[0] ("core")`) {
		t.Fatalf("sync without a registry: %v, want the missing setting named", err)
	}
	components, err := b.store.Components(context.Background(), store.LocalSite)
	if err != nil || len(components) != 0 {
		t.Fatalf("components %v (%v), want none written", components, err)
	}
}

// A registry that hangs holds a check only until its lease is lost: the
// requests in flight are aborted, and nothing is written for them.
func TestHangingRegistryIsCancelledAtLeaseLoss(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var requests atomic.Int32
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/-/npm/v1/keys" {
			http.NotFound(w, r)
			return
		}
		requests.Add(1)
		<-r.Context().Done()
	}))
	t.Cleanup(hang.Close)
	u, err := npm.ParseRegistryURL(hang.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	b.checker.UseNpm(&npm.Client{Fetcher: b.fetcher, Registries: npm.Registries{Default: u}})
	b.sync(manifest.Component{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"},
		manifest.Component{Code: "blog", Name: "Blog", Version: "1.0.0", Source: "npm:@acme/blog"})
	done := make(chan Result, 1)
	go func() { done <- b.run(lease.Operator) }()
	wait.True(t, "two requests at the registry", wait.Guard, func() bool { return requests.Load() == 2 })
	if res := b.takeOver(done); res.Status != LeaseLost || res.Failed != 0 {
		t.Fatalf("result = %s", resultJSON(res))
	}
	var rows int
	b.db.QueryRow(t, "SELECT count(*) FROM sources").Scan(&rows)
	if rows != 0 {
		t.Fatalf("%d source rows written by a check that lost its lease", rows)
	}
}

// A package stored from one registry is fetched whole from another: the
// new registry's 304 would vouch for a document it never sent.
func TestNpmValidatorsStayWithTheirRegistry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first, second := npmreg.New(t), npmreg.New(t)
	npmSite(b, first)
	b.run(lease.Operator)
	npmSite(b, second) // the same packages, and so the same ETags
	res := b.run(lease.Operator)
	if res.NotModified != 0 || res.Fetched != 3 {
		t.Fatalf("after the registry changed: %+v, want every package fetched whole", res)
	}
	health, err := b.store.SourceHealth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range health {
		if s.URL == "npm:@acme/blog" && s.Registry != second.URL {
			t.Errorf("blog's registry %q, want the second", s.Registry)
		}
	}
}

// After the registry changed, a package the new one cannot give keeps the
// results evaluated from what the old one sent: it is never verified with
// keys that did not sign it.
func TestNpmStoredPackageStaysWithItsRegistry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first, second := npmreg.New(t), npmreg.New(t)
	npmSite(b, first)
	b.run(lease.Operator)
	b.useRegistry(second) // it has none of the packages
	if res := b.run(lease.Operator); res.Failed != 4 {
		t.Fatalf("the second registry: %+v, want every package failed", res)
	}
	if got := b.catalogRow("acme--blog"); !got.Evaluated || got.UpdateVersion != "1.1.0" {
		t.Errorf("blog after its registry failed: evaluated %v, update %q, want 1.1.0 as the first registry said", got.Evaluated, got.UpdateVersion)
	}
}

// The keys a check verified with are pinned even when none of the
// registry's packages could be read.
func TestNpmKeysArePinnedWhenEveryPackageFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := npmreg.New(t)
	b.useRegistry(r)
	b.sync(manifest.Component{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"})
	if res := b.run(lease.Operator); res.Failed != 1 {
		t.Fatalf("check: %+v", res)
	}
	keys, err := b.store.RegistryKeys(context.Background())
	if err != nil || len(keys[r.URL].KeyIDs) != 1 || keys[r.URL].KeyIDs[0] != r.KeyID() {
		t.Fatalf("pinned %+v (%v), want the registry's key", keys, err)
	}
}

// A 304 for a stored package that cannot be read asks for the whole
// document at once, instead of failing the same way at every check.
func TestNpmUnreadableStoredPackageIsFetchedWhole(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := npmreg.New(t)
	npmSite(b, r)
	b.run(lease.Operator)
	b.db.MustExec(t, `UPDATE sources SET document = convert_to('{"Versions": 5}', 'UTF8') WHERE url = 'npm:@acme/blog'`)
	res := b.run(lease.Operator)
	if res.Fetched != 1 || res.NotModified != 2 || res.Failed != 1 {
		t.Fatalf("check: %+v, want blog fetched whole, two 304s and the missing package", res)
	}
	if got := b.catalogRow("acme--blog"); !got.Evaluated || got.UpdateVersion != "1.1.0" {
		t.Errorf("blog: evaluated %v, update %q", got.Evaluated, got.UpdateVersion)
	}
}

// An npm source's trust is judged at every check, a 304 too: a registry
// that starts publishing its keys while its packages stay the same makes
// its sources verified, no longer unsigned.
func TestNpmTrustIsJudgedAgainOnA304(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := npmreg.New(t)
	r.PublishKeys(false)
	npmSite(b, r)
	b.run(lease.Operator)
	unsigned := func() int {
		t.Helper()
		sum, err := b.store.Summary(context.Background(), store.LocalSite, readmodel.DevSeparate)
		if err != nil {
			t.Fatal(err)
		}
		return sum.UnsignedSources
	}
	if n := unsigned(); n != 3 {
		t.Fatalf("without keys: %d unsigned sources, want 3", n)
	}
	r.PublishKeys(true)
	if res := b.run(lease.Operator); res.NotModified != 3 {
		t.Fatalf("second check: %+v, want three 304s", res)
	}
	if n := unsigned(); n != 0 {
		t.Errorf("with keys, after 304s: %d unsigned sources, want 0", n)
	}
}

// A package document of megabytes sent uncompressed (this registry never
// compresses) is spooled to a temporary file and read from it: the check
// reads the package as from any other document, and leaves neither a file
// in TMPDIR nor one open. Not parallel: TMPDIR is set for the test.
func TestNpmLargeUncompressedDocumentIsReadFromASpool(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	b := setup(t)
	r := npmreg.New(t)
	npmSite(b, r)
	r.SetReadme("@acme/blog", 3*fetch.SpoolAbove)
	u, err := npm.ParseRegistryURL(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	b.checker.UseNpm(&npm.Client{Fetcher: b.fetcher, Registries: npm.Registries{Default: u}, MaxDocument: 8 * fetch.SpoolAbove})

	if res := b.run(lease.Operator); res.Fetched != 3 || res.Failed != 1 {
		t.Fatalf("check: %+v, want 3 fetched and the missing package failed", res)
	}
	if blog := b.catalogRow("acme--blog"); blog.UpdateVersion != "1.1.0" || blog.RequiredCore != ">=3.0.0" || blog.ProvenanceLost != "1.1.0" {
		t.Errorf("blog: update %q, required core %q, provenance lost %q", blog.UpdateVersion, blog.RequiredCore, blog.ProvenanceLost)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("files left in TMPDIR: %v", left)
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if target, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); strings.Contains(target, tmp) {
			t.Errorf("a spooled document is still open: %s", target)
		}
	}
}
