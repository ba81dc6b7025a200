package updatecheck

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/remedy"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/verdaccio"
	"github.com/upcheck/upcheck/internal/tree"
)

// fixRegistry is a real registry holding an express-like chain, behind a
// proxy that counts what it answers each package.
type fixRegistry struct {
	mu       sync.Mutex
	statuses map[string][]int // by request path
	reg      *verdaccio.Registry
	lockfile string // the site's package-lock.json (startFixRegistry's lock)
	pnpmLock string // the same site's pnpm-lock.yaml (startFixRegistry's lock)
}

// startFixRegistry publishes, with the real npm client: xpress, whose
// 4.20.0 moves its pinned p2r to the fixed 0.1.10 and whose 4.21.0 also
// moves xsend to 0.19.0, and which takes xqs by a tilde range that holds
// the fixed 6.7.3; and sock, whose every release takes engine ~6.0.0,
// whose every release takes xws ~8.11.0 (as an optional dependency),
// while 8.17.1 is the fix. b's checker reads it through the counting
// proxy. With lock, a site depending on xpress 4.17.1 and sock 4.0.0 is
// locked by the real npm client before any later release is published
// (fr.lockfile), as a site installed then would be.
func startFixRegistry(t *testing.T, b *bundle, lock bool) *fixRegistry {
	reg := verdaccio.Start(t)
	token := reg.AddUser(t, "publisher")
	publish := func(name, version string, fields map[string]any) {
		reg.Publish(t, token, verdaccio.Package{Name: name, Version: version, Fields: fields})
	}
	deps := func(d map[string]string) map[string]any { return map[string]any{"dependencies": d} }
	xpress := map[string]map[string]string{
		"4.17.1": {"p2r": "0.1.7", "xsend": "0.17.1", "xqs": "~6.7.0"},
		"4.19.2": {"p2r": "0.1.7", "xsend": "0.17.1", "xqs": "~6.7.0"},
		"4.20.0": {"p2r": "0.1.10", "xsend": "0.17.1", "xqs": "~6.7.0"},
		"4.21.0": {"p2r": "0.1.10", "xsend": "0.19.0", "xqs": "~6.7.0"},
	}
	releases := func(installed bool) {
		pick := func(vs ...string) []string {
			if installed {
				return vs[:1]
			}
			return vs[1:]
		}
		for _, v := range pick("0.1.7", "0.1.10") {
			publish("p2r", v, nil)
		}
		for _, v := range pick("0.17.1", "0.19.0") {
			publish("xsend", v, nil)
		}
		for _, v := range pick("6.7.0", "6.7.3") {
			publish("xqs", v, nil)
		}
		for _, v := range pick("4.17.1", "4.19.2", "4.20.0", "4.21.0") {
			publish("xpress", v, deps(xpress[v]))
		}
		for _, v := range pick("8.11.0", "8.11.1", "8.17.1") {
			publish("xws", v, nil)
		}
		for _, v := range pick("6.0.0", "6.0.2") {
			publish("engine", v, map[string]any{"optionalDependencies": map[string]string{"xws": "~8.11.0"}})
		}
		for _, v := range pick("4.0.0", "4.1.0") {
			publish("sock", v, deps(map[string]string{"engine": "~6.0.0"}))
		}
	}
	releases(true)
	var lockfile, pnpmLock string
	if lock {
		site := verdaccio.Site{"dependencies": {"xpress": "4.17.1", "sock": "4.0.0"}}
		lockfile, pnpmLock = reg.Lock(t, "npm", site), reg.Lock(t, "pnpm", site)
	}
	releases(false)

	fr := &fixRegistry{statuses: map[string][]int{}, reg: reg, lockfile: lockfile, pnpmLock: pnpmLock}
	target, err := url.Parse(reg.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(r *http.Response) error {
		fr.mu.Lock()
		defer fr.mu.Unlock()
		fr.statuses[r.Request.URL.Path] = append(fr.statuses[r.Request.URL.Path], r.StatusCode)
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	regs, err := npm.LoadRegistries(srv.URL+"/", "", os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	b.checker.UseNpm(&npm.Client{Fetcher: b.fetcher, Registries: regs})
	return fr
}

// answers are the statuses the registry answered for name's document.
func (fr *fixRegistry) answers(name string) []int {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	return slices.Clone(fr.statuses["/"+name])
}

// fixSite is the tree a site installing xpress 4.17.1 and sock 4.0.0 has,
// stored as the tree sync stores it.
func fixSite(t *testing.T, b *bundle) *tree.Tree {
	tr := &tree.Tree{
		Packages: []tree.Package{
			{ID: "node_modules/xpress", Name: "xpress", Version: "4.17.1"},
			{ID: "node_modules/p2r", Name: "p2r", Version: "0.1.7"},
			{ID: "node_modules/xsend", Name: "xsend", Version: "0.17.1"},
			{ID: "node_modules/xqs", Name: "xqs", Version: "6.7.0"},
			{ID: "node_modules/sock", Name: "sock", Version: "4.0.0"},
			{ID: "node_modules/engine", Name: "engine", Version: "6.0.0"},
			{ID: "node_modules/xws", Name: "xws", Version: "8.11.0", Optional: true},
		},
		Edges: []tree.Edge{
			{From: tree.Root, Name: "xpress", Range: "^4.17.1", Kind: tree.KindProd, To: "node_modules/xpress"},
			{From: tree.Root, Name: "sock", Range: "^4.0.0", Kind: tree.KindProd, To: "node_modules/sock"},
			{From: "node_modules/xpress", Name: "p2r", Range: "0.1.7", Kind: tree.KindProd, To: "node_modules/p2r"},
			{From: "node_modules/xpress", Name: "xsend", Range: "0.17.1", Kind: tree.KindProd, To: "node_modules/xsend"},
			{From: "node_modules/xpress", Name: "xqs", Range: "~6.7.0", Kind: tree.KindProd, To: "node_modules/xqs"},
			{From: "node_modules/sock", Name: "engine", Range: "~6.0.0", Kind: tree.KindProd, To: "node_modules/engine"},
			{From: "node_modules/engine", Name: "xws", Range: "~8.11.0", Kind: tree.KindOptional, To: "node_modules/xws"},
		},
	}
	tr.Sort()
	storeTree(t, b, tr)
	return tr
}

// storeTree stores tr as the tree sync does (store's TreeWrite); a
// package of no source is the registry's.
func storeTree(t *testing.T, b *bundle, tr *tree.Tree) {
	for i := range tr.Packages {
		if tr.Packages[i].Source == "" {
			tr.Packages[i].Source = tree.SourceRegistry
		}
	}
	syncTree(t, b, "/site/package-lock.json", tr)
}

var fixFindings = []remedy.Finding{
	{Instance: "node_modules/xqs", Advisory: "GHSA-xqs", Severity: 3, Fixed: "6.7.3"},
	{Instance: "node_modules/p2r", Advisory: "GHSA-p2r", Severity: 3, Fixed: "0.1.10"},
	{Instance: "node_modules/xsend", Advisory: "GHSA-xsend", Severity: 1, Fixed: "0.19.0"},
	{Instance: "node_modules/xws", Advisory: "GHSA-xws", Severity: 4, Fixed: "8.17.1"},
	{Instance: "node_modules/xws", Advisory: "GHSA-nofix", Severity: 4},
	{Instance: "node_modules/xpress", Advisory: "GHSA-xpress", Severity: 2, Fixed: "4.19.2"},
}

func (b *bundle) acquire() lease.Lease {
	b.t.Helper()
	a, err := b.lease.Acquire(context.Background(), lease.Operator)
	if err != nil || a.Outcome != lease.Acquired {
		b.t.Fatalf("acquire: %v %v", a.Outcome, err)
	}
	return a.Lease
}

// storedFixWords are the stored fixes, worded as a page reads them.
func (b *bundle) storedFixWords() map[string]string {
	b.t.Helper()
	fixes, err := b.store.TreeFixes(context.Background(), store.LocalSite)
	if err != nil {
		b.t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range fixes {
		var tf readmodel.TreeFix
		if err := json.Unmarshal(f.Fix, &tf); err != nil {
			b.t.Fatal(err)
		}
		out[f.PackageID+" "+f.AdvisoryID] = readmodel.TreeFixText(tf)
	}
	return out
}

// On real registry documents: the tilde range that holds the fix is a
// lockfile-only update (a), the pinned packages are cleared through one
// release of xpress (b), and the optional dependency every release of
// engine pins is none yet, naming engine (c); an advisory without a fix is
// not fixable. The fixes and the documents are stored; the next check
// fetches each document conditionally (the registry answers 304) and
// decides the same.
func TestTreeFixesOnARealRegistry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fr := startFixRegistry(t, b, false)
	tr := fixSite(t, b)
	l := b.acquire()

	decided, err := b.checker.treeFixes(context.Background(), l, tr, remedy.ManagerNPM, fixFindings)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"node_modules/xqs GHSA-xqs":     "in range: npm update xqs",
		"node_modules/p2r GHSA-p2r":     "update xpress 4.17.1 → 4.21.0",
		"node_modules/xsend GHSA-xsend": "update xpress 4.17.1 → 4.21.0",
		"node_modules/xws GHSA-xws":     "no fix yet through sock: engine 6.0.2 requires xws ~8.11.0",
		"node_modules/xws GHSA-nofix":   "no fixed version is published",
		// The site's own range holds the release that clears it.
		"node_modules/xpress GHSA-xpress": "in range: npm update xpress",
	}
	got := b.storedFixWords()
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("stored %v", got)
	}
	fixes, err := b.store.TreeFixes(context.Background(), store.LocalSite)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fixes {
		if f.Direct != (f.PackageID == "node_modules/xpress") {
			t.Errorf("%s %s: direct %v", f.PackageID, f.AdvisoryID, f.Direct)
		}
	}
	actions := remedy.Group(decided)
	if len(actions) != 3 {
		t.Fatalf("actions %+v", actions)
	}
	var top readmodel.TreeFix
	raw, _ := json.Marshal(actions[0].Fix)
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatal(err)
	}
	if words := readmodel.TreeActionText(top, actions[0].Advisories, actions[0].InDependencies); words != "Update xpress to 4.21.0: clears 2 advisories (2 in its dependencies)" {
		t.Errorf("the first action: %q", words)
	}
	for _, name := range []string{"xpress", "p2r", "xsend", "xqs", "sock", "engine", "xws"} {
		if a := fr.answers(name); !slices.Equal(a, []int{http.StatusOK}) {
			t.Errorf("%s answered %v, want one 200", name, a)
		}
	}

	// The next check: every document conditionally, the same fixes.
	if _, err := b.checker.treeFixes(context.Background(), l, tr, remedy.ManagerNPM, fixFindings); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"xpress", "p2r", "xws"} {
		if a := fr.answers(name); !slices.Equal(a, []int{http.StatusOK, http.StatusNotModified}) {
			t.Errorf("%s answered %v, want 200 then 304", name, a)
		}
	}
	if again := b.storedFixWords(); len(again) != len(want) || again["node_modules/p2r GHSA-p2r"] != want["node_modules/p2r GHSA-p2r"] {
		t.Errorf("after the 304s: %v", again)
	}
}

// Only findings with a fix fetch, at most the cap, the packages the most
// findings need first; a finding that needs a document past the cap is
// not decided. A check whose lease was taken over writes nothing, and a
// cancelled one fetches nothing more.
func TestTreeFixesFetchOnlyWhatFindingsNeedUnderTheLease(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fr := startFixRegistry(t, b, false)
	tr := fixSite(t, b)
	l := b.acquire()

	// No finding with a fix: nothing is fetched.
	if _, err := b.checker.treeFixes(context.Background(), l, tr, remedy.ManagerNPM, fixFindings[4:5]); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"xpress", "xws", "sock"} {
		if a := fr.answers(name); len(a) != 0 {
			t.Errorf("%s fetched (%v) for a finding without a fix", name, a)
		}
	}

	// A cap of 2: xws's finding needs sock, engine and xws; the two most
	// needed (by count, then severity, then name) are fetched.
	b.checker.maxFixDocuments = 2
	decided, err := b.checker.treeFixes(context.Background(), l, tr, remedy.ManagerNPM, fixFindings[:4])
	if err != nil {
		t.Fatal(err)
	}
	fetched := 0
	for _, name := range []string{"xpress", "p2r", "xsend", "xqs", "sock", "engine", "xws"} {
		fetched += len(fr.answers(name))
	}
	if fetched != 2 {
		t.Errorf("%d documents fetched with a cap of 2", fetched)
	}
	if len(fr.answers("xpress")) != 1 || decided[1].Fix.Kind != remedy.KindUnknown {
		t.Errorf("xpress (needed by three findings) answered %v; p2r's fix %+v", fr.answers("xpress"), decided[1].Fix)
	}
	b.checker.maxFixDocuments = 0

	// The lease taken over: the decision is not written.
	before := b.storedFixWords()
	if _, err := b.lease.Release(context.Background(), l.Owner, false); err != nil {
		t.Fatal(err)
	}
	if a, err := b.otherInstance().lease.Acquire(context.Background(), lease.Operator); err != nil || a.Outcome != lease.Acquired {
		t.Fatalf("the other instance: %v %v", a.Outcome, err)
	}
	if _, err := b.checker.treeFixes(context.Background(), l, tr, remedy.ManagerNPM, fixFindings[4:]); !errors.Is(err, lease.ErrLeaseLost) {
		t.Errorf("with the lease lost: %v, want ErrLeaseLost", err)
	}
	if after := b.storedFixWords(); len(before) != 4 || !maps.Equal(after, before) {
		t.Errorf("written without the lease: %v, before %v", after, before)
	}

	// Cancelled (the lease lost midway): nothing fetched, an error.
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(lease.ErrLeaseLost)
	answered := len(fr.answers("xws"))
	if _, err := b.checker.treeFixes(ctx, l, tr, remedy.ManagerNPM, fixFindings); !errors.Is(err, lease.ErrLeaseLost) {
		t.Errorf("cancelled: %v, want the cause", err)
	}
	if len(fr.answers("xws")) != answered {
		t.Errorf("fetched after the cancellation")
	}
}

// lockTree reads the instances and edges of an npm lockfile (v3) as npm
// resolves them (the nearest node_modules up the path): enough of the
// tree for these tests, where internal/lockfile is not at hand.
func lockTree(t *testing.T, path string) *tree.Tree {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]struct {
			Version                            string
			Optional                           bool
			Dependencies, OptionalDependencies map[string]string
		}
	}
	if err := json.Unmarshal(raw, &lock); err != nil {
		t.Fatal(err)
	}
	tr := &tree.Tree{}
	for key, p := range lock.Packages {
		from := key
		if key != "" {
			tr.Packages = append(tr.Packages, tree.Package{ID: key, Name: key[strings.LastIndex(key, "node_modules/")+len("node_modules/"):],
				Version: p.Version, Optional: p.Optional, Source: tree.SourceRegistry})
		} else {
			from = tree.Root
		}
		add := func(deps map[string]string, kind tree.Kind) {
			for name, r := range deps {
				e := tree.Edge{From: from, Name: name, Range: r, Kind: kind}
				for dir := key; ; {
					at := "node_modules/" + name
					if dir != "" {
						at = dir + "/" + at
					}
					if _, ok := lock.Packages[at]; ok {
						e.To = at
						break
					}
					if dir == "" {
						break
					}
					dir = strings.TrimSuffix(dir[:strings.LastIndex(dir, "node_modules/")], "/")
				}
				tr.Edges = append(tr.Edges, e)
			}
		}
		add(p.Dependencies, tree.KindProd)
		add(p.OptionalDependencies, tree.KindOptional)
	}
	tr.Sort()
	return tr
}

// npmIn runs the real npm client in dir against fr's registry, lockfile
// only.
func (fr *fixRegistry) npmIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("npm", append(args, "--package-lock-only", "--ignore-scripts", "--userconfig", fr.reg.Npmrc(t, ""),
		"--registry", fr.reg.URL, "--cache", filepath.Join(t.TempDir(), "npm-cache"),
		"--no-audit", "--no-fund", "--no-update-notifier", "--loglevel", "error")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_globalconfig="+filepath.Join(dir, "no-global-npmrc"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// installed are the versions of name the tree at path installs.
func installed(t *testing.T, path, name string) []string {
	t.Helper()
	var out []string
	for _, p := range lockTree(t, path).Packages {
		if p.Name == name {
			out = append(out, p.Version)
		}
	}
	slices.Sort(out)
	return out
}

// What upcheck says clears each finding is what the real npm client
// does: on a site locked by npm before the fixes were published, "npm
// update xqs" (in range) installs the fixed xqs; updating xpress to the
// release named (through a component) installs the fixed p2r and xsend;
// and sock's latest release (none yet) still installs the vulnerable xws.
func TestTreeFixesAreWhatNpmDoes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fr := startFixRegistry(t, b, true)
	tr := lockTree(t, fr.lockfile)
	storeTree(t, b, tr)
	for name, want := range map[string]string{"xpress": "4.17.1", "p2r": "0.1.7", "xqs": "6.7.0", "xws": "8.11.0"} {
		if got := installed(t, fr.lockfile, name); !slices.Equal(got, []string{want}) {
			t.Fatalf("the site as locked installs %s %v, want %s", name, got, want)
		}
	}
	findings := []remedy.Finding{
		{Instance: "node_modules/xqs", Advisory: "GHSA-xqs", Severity: 3, Fixed: "6.7.3"},
		{Instance: "node_modules/p2r", Advisory: "GHSA-p2r", Severity: 3, Fixed: "0.1.10"},
		{Instance: "node_modules/xsend", Advisory: "GHSA-xsend", Severity: 1, Fixed: "0.19.0"},
		{Instance: "node_modules/xws", Advisory: "GHSA-xws", Severity: 4, Fixed: "8.17.1"},
	}
	decided, err := b.checker.treeFixes(context.Background(), b.acquire(), tr, remedy.ManagerNPM, findings)
	if err != nil {
		t.Fatal(err)
	}
	inRange := remedy.Fix{Kind: remedy.KindInRange, Manager: remedy.ManagerNPM, Package: "xqs"}
	update := remedy.Fix{Kind: remedy.KindComponent, Updates: []remedy.Update{{Component: "xpress", From: "4.17.1", To: "4.21.0"}}}
	none := remedy.Fix{Kind: remedy.KindNoneYet, Component: "sock", PinnedBy: "engine", PinnedByVersion: "6.0.2", Package: "xws", Range: "~8.11.0"}
	for i, want := range []remedy.Fix{inRange, update, update, none} {
		if !reflect.DeepEqual(decided[i].Fix, want) {
			t.Fatalf("%s: %+v, want %+v", findings[i].Advisory, decided[i].Fix, want)
		}
	}

	dir := filepath.Dir(fr.lockfile)
	fr.npmIn(t, dir, "update", "xqs")
	if got := installed(t, fr.lockfile, "xqs"); !slices.Equal(got, []string{"6.7.3"}) {
		t.Errorf("after npm update xqs: xqs %v", got)
	}
	fr.npmIn(t, dir, "install", "xpress@4.21.0")
	if p2r, xsend := installed(t, fr.lockfile, "p2r"), installed(t, fr.lockfile, "xsend"); !slices.Equal(p2r, []string{"0.1.10"}) || !slices.Equal(xsend, []string{"0.19.0"}) {
		t.Errorf("after updating xpress to 4.21.0: p2r %v, xsend %v", p2r, xsend)
	}
	fr.npmIn(t, dir, "install", "sock@latest")
	if got := installed(t, fr.lockfile, "sock"); !slices.Equal(got, []string{"4.1.0"}) {
		t.Fatalf("sock@latest: %v", got)
	}
	if got := installed(t, fr.lockfile, "xws"); len(got) != 1 || got[0] == "8.17.1" {
		t.Errorf("after updating sock to its latest release: xws %v, want a release of ~8.11.0", got)
	}
}

// Past the cap, each check fetches first the documents never read, then
// those read longest ago, and decides a package it does not fetch from
// its stored document: findings that need more documents than one check
// fetches are all decided within as many checks as the cap divides them
// into (here seven documents, two a check: four checks), as one check
// without a cap decides them.
func TestTreeFixesPastTheCapAreReadByTheNextChecks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fr := startFixRegistry(t, b, false)
	tr := fixSite(t, b)
	l := b.acquire()
	names := []string{"xpress", "p2r", "xsend", "xqs", "sock", "engine", "xws"}
	fetched := func() (n int, each map[string]int) {
		each = map[string]int{}
		for _, name := range names {
			each[name] = len(fr.answers(name))
			n += each[name]
		}
		return n, each
	}

	b.checker.maxFixDocuments = 2
	var decided []remedy.Decided
	for check := 1; check <= 4; check++ {
		var err error
		if decided, err = b.checker.treeFixes(context.Background(), l, tr, remedy.ManagerNPM, fixFindings[:4]); err != nil {
			t.Fatal(err)
		}
		if n, _ := fetched(); n != 2*check {
			t.Fatalf("check %d: %d documents fetched in all, want %d", check, n, 2*check)
		}
	}
	if _, each := fetched(); slices.Contains(slices.Collect(maps.Values(each)), 0) {
		t.Errorf("after four checks of two documents, one of the seven was never fetched: %v", each)
	}
	capped := b.storedFixWords()

	b.checker.maxFixDocuments = 0
	whole, err := b.checker.treeFixes(context.Background(), l, tr, remedy.ManagerNPM, fixFindings[:4])
	if err != nil {
		t.Fatal(err)
	}
	for i := range whole {
		if whole[i].Fix.Kind == remedy.KindUnknown || decided[i].Fix.Kind != whole[i].Fix.Kind {
			t.Errorf("%s: decided %v under the cap, %v in one check", fixFindings[i].Advisory, decided[i].Fix.Kind, whole[i].Fix.Kind)
		}
	}
	if !maps.Equal(capped, b.storedFixWords()) {
		t.Errorf("stored under the cap %v, in one check %v", capped, b.storedFixWords())
	}
}
