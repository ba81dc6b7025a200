package remedy_test

import (
	"reflect"
	"testing"

	"github.com/upcheck/upcheck/internal/remedy"
	"github.com/upcheck/upcheck/internal/tree"
)

// site is an express-like tree: the site depends on express 4.17.1 (which
// pins path-to-regexp and send, and takes qs by a tilde range) and on
// sock 4.0.0, which brings engine, which pins ws.
func site() *tree.Tree {
	t := &tree.Tree{
		Packages: []tree.Package{
			{ID: "node_modules/express", Name: "express", Version: "4.17.1"},
			{ID: "node_modules/path-to-regexp", Name: "path-to-regexp", Version: "0.1.7"},
			{ID: "node_modules/send", Name: "send", Version: "0.17.1"},
			{ID: "node_modules/qs", Name: "qs", Version: "6.7.0"},
			{ID: "node_modules/sock", Name: "sock", Version: "4.0.0"},
			{ID: "node_modules/engine", Name: "engine", Version: "6.0.0"},
			{ID: "node_modules/ws", Name: "ws", Version: "8.11.0"},
		},
		Edges: []tree.Edge{
			{From: tree.Root, Name: "express", Range: "^4.17.1", Kind: tree.KindProd, To: "node_modules/express"},
			{From: tree.Root, Name: "sock", Range: "^4.0.0", Kind: tree.KindProd, To: "node_modules/sock"},
			{From: "node_modules/express", Name: "path-to-regexp", Range: "0.1.7", Kind: tree.KindProd, To: "node_modules/path-to-regexp"},
			{From: "node_modules/express", Name: "send", Range: "0.17.1", Kind: tree.KindProd, To: "node_modules/send"},
			{From: "node_modules/express", Name: "qs", Range: "~6.7.0", Kind: tree.KindProd, To: "node_modules/qs"},
			{From: "node_modules/sock", Name: "engine", Range: "~6.0.0", Kind: tree.KindProd, To: "node_modules/engine"},
			{From: "node_modules/engine", Name: "ws", Range: "~8.11.0", Kind: tree.KindProd, To: "node_modules/ws"},
		},
	}
	t.Sort()
	return t
}

func doc(name, latest string, versions map[string]map[string]string) *remedy.Document {
	d := &remedy.Document{Name: name, Latest: latest, Versions: map[string]remedy.Version{}}
	for v, deps := range versions {
		d.Versions[v] = remedy.Version{Dependencies: deps}
	}
	return d
}

func documents() map[string]*remedy.Document {
	return map[string]*remedy.Document{
		"express": doc("express", "4.21.0", map[string]map[string]string{
			"4.17.1": {"path-to-regexp": "0.1.7", "send": "0.17.1", "qs": "~6.7.0"},
			"4.19.2": {"path-to-regexp": "0.1.7", "send": "0.17.1", "qs": "~6.7.0"},
			"4.20.0": {"path-to-regexp": "0.1.10", "send": "0.17.1", "qs": "~6.7.0"},
			"4.21.0": {"path-to-regexp": "0.1.10", "send": "0.19.0", "qs": "~6.7.0"},
		}),
		"path-to-regexp": doc("path-to-regexp", "0.1.10", map[string]map[string]string{"0.1.7": nil, "0.1.10": nil}),
		"send":           doc("send", "0.19.0", map[string]map[string]string{"0.17.1": nil, "0.19.0": nil}),
		"qs":             doc("qs", "6.7.3", map[string]map[string]string{"6.7.0": nil, "6.7.3": nil, "7.0.0-rc.1": nil}),
		"sock": doc("sock", "4.1.0", map[string]map[string]string{
			"4.0.0": {"engine": "~6.0.0"}, "4.1.0": {"engine": "~6.0.0"}}),
		"engine": doc("engine", "6.0.2", map[string]map[string]string{
			"6.0.0": {"ws": "~8.11.0"}, "6.0.2": {"ws": "~8.11.0"}, "7.0.0": {"ws": "^8.17.1"}}),
		"ws": doc("ws", "8.17.1", map[string]map[string]string{"8.11.0": nil, "8.11.1": nil, "8.17.1": nil}),
	}
}

// Each kind of fix, decided on one tree: a tilde range that admits the
// fix (in range), a component whose later releases change a pinned range
// (through a component, every finding on it moved to the one release that
// clears them all), a component whose every release pins a package that
// pins the vulnerable one (none yet, naming the package that pins it, not
// the component), an advisory without a fix, and a document not read.
func TestDecide(t *testing.T) {
	t.Parallel()
	findings := []remedy.Finding{
		{Instance: "node_modules/qs", Advisory: "GHSA-qs", Severity: 3, Fixed: "6.7.3"},
		{Instance: "node_modules/path-to-regexp", Advisory: "GHSA-ptr", Severity: 3, Fixed: "0.1.10"},
		{Instance: "node_modules/send", Advisory: "GHSA-send", Severity: 1, Fixed: "0.19.0"},
		{Instance: "node_modules/express", Advisory: "GHSA-express", Severity: 2, Fixed: "4.19.2"},
		{Instance: "node_modules/ws", Advisory: "GHSA-ws", Severity: 4, Fixed: "8.17.1"},
		{Instance: "node_modules/ws", Advisory: "GHSA-nofix", Severity: 4},
	}
	in := remedy.Input{Tree: site(), Manager: remedy.ManagerNPM, Findings: findings, Documents: documents()}
	got := remedy.Decide(in)
	express := func(to string) remedy.Fix {
		return remedy.Fix{Kind: remedy.KindComponent, Updates: []remedy.Update{{Component: "express", From: "4.17.1", To: to}}}
	}
	want := []remedy.Fix{
		{Kind: remedy.KindInRange, Manager: remedy.ManagerNPM, Package: "qs"},
		express("4.21.0"), // 4.20.0 alone would do; send needs 4.21.0, which clears both
		express("4.21.0"),
		// express's own advisory: the same update, but it is not in the
		// site's range ^4.17.1? It is: 4.21.0 is picked by ^4.17.1, so
		// the site's own range admits it.
		{Kind: remedy.KindInRange, Manager: remedy.ManagerNPM, Package: "express"},
		{Kind: remedy.KindNoneYet, Component: "sock", PinnedBy: "sock", PinnedByVersion: "4.1.0", Package: "engine", Range: "~6.0.0"},
		{Kind: remedy.KindNoFix},
	}
	for i := range want {
		if !reflect.DeepEqual(got[i].Fix, want[i]) {
			t.Errorf("%s: %+v, want %+v", findings[i].Advisory, got[i].Fix, want[i])
		}
	}
	if !got[3].Direct || got[1].Direct {
		t.Errorf("direct: express's own %v, path-to-regexp's %v", got[3].Direct, got[1].Direct)
	}

	actions := remedy.Group(got)
	if len(actions) != 3 {
		t.Fatalf("%d actions: %+v", len(actions), actions)
	}
	if a := actions[0]; !reflect.DeepEqual(a.Fix, express("4.21.0")) || a.Advisories != 2 || a.InDependencies != 2 || a.Severity != 3 {
		t.Errorf("first action: %+v, clears %d (%d in dependencies), severity %d", a.Fix, a.Advisories, a.InDependencies, a.Severity)
	}
	// One advisory each: qs's (high) before express's own (medium).
	if actions[1].Fix.Package != "qs" || actions[2].Fix.Package != "express" || actions[2].InDependencies != 0 {
		t.Errorf("then %+v and %+v", actions[1], actions[2])
	}

	// A document not read leaves its findings undecided.
	docs := documents()
	delete(docs, "engine")
	in.Documents = docs
	if f := remedy.Decide(in)[4].Fix; f.Kind != remedy.KindUnknown || f.Package != "engine" {
		t.Errorf("without engine's document: %+v", f)
	}
}

// When sock's later release takes engine 7, whose range admits the fixed
// ws, the update of sock clears it; when engine's every release pins ws,
// engine is named as the package that pins it.
func TestDecideThroughTwoLevels(t *testing.T) {
	t.Parallel()
	docs := documents()
	docs["sock"].Versions["4.2.0"] = remedy.Version{Dependencies: map[string]string{"engine": "^7.0.0"}}
	docs["sock"].Latest = "4.2.0"
	f := remedy.Finding{Instance: "node_modules/ws", Advisory: "GHSA-ws", Severity: 4, Fixed: "8.17.1"}
	got := remedy.Decide(remedy.Input{Tree: site(), Manager: remedy.ManagerPNPM, Findings: []remedy.Finding{f}, Documents: docs})
	want := remedy.Fix{Kind: remedy.KindComponent, Updates: []remedy.Update{{Component: "sock", From: "4.0.0", To: "4.2.0"}}}
	if !reflect.DeepEqual(got[0].Fix, want) {
		t.Errorf("%+v, want %+v", got[0].Fix, want)
	}

	docs = documents()
	delete(docs["engine"].Versions, "7.0.0")
	docs["sock"].Versions["4.2.0"] = remedy.Version{Dependencies: map[string]string{"engine": "*"}}
	docs["sock"].Latest = "4.2.0"
	got = remedy.Decide(remedy.Input{Tree: site(), Findings: []remedy.Finding{f}, Documents: docs})
	want = remedy.Fix{Kind: remedy.KindNoneYet, Component: "sock", PinnedBy: "engine", PinnedByVersion: "6.0.2", Package: "ws", Range: "~8.11.0"}
	if !reflect.DeepEqual(got[0].Fix, want) {
		t.Errorf("%+v, want %+v", got[0].Fix, want)
	}
}

// npm's pick: the latest tag when the range holds it, else the highest
// release not deprecated; pre-releases and what is not a range are not
// picked; an alias is read as its range.
func TestPick(t *testing.T) {
	t.Parallel()
	d := doc("p", "1.2.0", map[string]map[string]string{"1.0.0": nil, "1.2.0": nil, "1.3.0": nil, "1.4.0": nil, "2.0.0-rc.1": nil})
	d.Versions["1.4.0"] = remedy.Version{Deprecated: true}
	for spec, want := range map[string]string{
		"^1.0.0": "1.2.0", ">=1.3.0 <2": "1.3.0", "1.4.x": "1.4.0", "": "1.2.0", "*": "1.2.0", "latest": "1.2.0",
		"npm:p@~1.3.0": "1.3.0", "1.0.0 - 1.1": "1.0.0", "^2.0.0-rc.1": "", "next": "", "git+https://h/p.git": "", "~0.9.0 || >=1.3.0 <1.4.0": "1.3.0",
	} {
		if got, ok := d.Pick(spec); got != want || ok != (want != "") {
			t.Errorf("Pick(%q) = %q, %v; want %q", spec, got, ok, want)
		}
	}
}

// A package pinned by its dependent, whose newer release in range takes
// the fix: the update is in range, of that dependent (npm update mid), not
// of the component. A package two components bring in needs both: one's
// update, and the other's in-range update, together one action.
func TestDecideInRangeBelowTheComponent(t *testing.T) {
	t.Parallel()
	tr := &tree.Tree{
		Packages: []tree.Package{
			{ID: "node_modules/app", Name: "app", Version: "1.0.0"},
			{ID: "node_modules/other", Name: "other", Version: "2.0.0"},
			{ID: "node_modules/mid", Name: "mid", Version: "1.0.0"},
			{ID: "node_modules/leaf", Name: "leaf", Version: "1.0.0"},
		},
		Edges: []tree.Edge{
			{From: tree.Root, Name: "app", Range: "^1.0.0", Kind: tree.KindProd, To: "node_modules/app"},
			{From: tree.Root, Name: "other", Range: "2.0.0", Kind: tree.KindProd, To: "node_modules/other"},
			{From: "node_modules/app", Name: "mid", Range: "^1.0.0", Kind: tree.KindProd, To: "node_modules/mid"},
			{From: "node_modules/mid", Name: "leaf", Range: "1.0.0", Kind: tree.KindProd, To: "node_modules/leaf"},
		},
	}
	tr.Sort()
	docs := map[string]*remedy.Document{
		"app":  doc("app", "1.0.0", map[string]map[string]string{"1.0.0": {"mid": "^1.0.0"}}),
		"mid":  doc("mid", "1.1.0", map[string]map[string]string{"1.0.0": {"leaf": "1.0.0"}, "1.1.0": {"leaf": "1.0.1"}}),
		"leaf": doc("leaf", "1.0.1", map[string]map[string]string{"1.0.0": nil, "1.0.1": nil}),
		"other": doc("other", "2.1.0", map[string]map[string]string{
			"2.0.0": {"leaf": "1.0.0"}, "2.1.0": {"leaf": "^1.0.1"}}),
	}
	f := remedy.Finding{Instance: "node_modules/leaf", Advisory: "GHSA-leaf", Severity: 2, Fixed: "1.0.1"}
	got := remedy.Decide(remedy.Input{Tree: tr, Manager: remedy.ManagerNPM, Findings: []remedy.Finding{f}, Documents: docs})
	want := remedy.Fix{Kind: remedy.KindInRange, Manager: remedy.ManagerNPM, Package: "mid"}
	if !reflect.DeepEqual(got[0].Fix, want) {
		t.Errorf("%+v, want %+v", got[0].Fix, want)
	}

	tr.Edges = append(tr.Edges, tree.Edge{From: "node_modules/other", Name: "leaf", Range: "1.0.0", Kind: tree.KindProd, To: "node_modules/leaf"})
	tr.Sort()
	got = remedy.Decide(remedy.Input{Tree: tr, Manager: remedy.ManagerNPM, Findings: []remedy.Finding{f}, Documents: docs})
	want = remedy.Fix{Kind: remedy.KindComponent, Manager: remedy.ManagerNPM, Package: "mid",
		Updates: []remedy.Update{{Component: "other", From: "2.0.0", To: "2.1.0"}}}
	if !reflect.DeepEqual(got[0].Fix, want) {
		t.Errorf("brought in by two: %+v, want %+v", got[0].Fix, want)
	}
}

// Needs names the documents of a finding's package and its paths, the
// most needed first, each with the lowest installed version, and none of
// a package that no registry serves (a workspace's own) nor of a finding
// without a fix.
func TestNeeds(t *testing.T) {
	t.Parallel()
	tr := site()
	tr.Packages = append(tr.Packages, tree.Package{ID: "node_modules/sock/node_modules/ws", Name: "ws", Version: "8.2.0"})
	for i := range tr.Packages {
		if tr.Packages[i].Name == "sock" {
			tr.Packages[i].Source = tree.SourceLink
		}
	}
	tr.Sort()
	got := remedy.Needs(tr, []remedy.Finding{
		{Instance: "node_modules/ws", Advisory: "A", Severity: 4, Fixed: "8.17.1"},
		{Instance: "node_modules/send", Advisory: "B", Severity: 1, Fixed: "0.19.0"},
		{Instance: "node_modules/path-to-regexp", Advisory: "C", Severity: 3, Fixed: "0.1.10"},
		{Instance: "node_modules/qs", Advisory: "D", Severity: 3},
	})
	want := []remedy.Need{{Name: "express", Floor: "4.17.1"}, {Name: "engine", Floor: "6.0.0"}, {Name: "ws", Floor: "8.2.0"},
		{Name: "path-to-regexp", Floor: "0.1.7"}, {Name: "send", Floor: "0.17.1"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%+v, want %+v", got, want)
	}
}

// A release that takes the package under an alias of its own still
// brings it in: an alias to the vulnerable release is no fix.
func TestDecideReadsAnAlias(t *testing.T) {
	t.Parallel()
	tr := &tree.Tree{
		Packages: []tree.Package{
			{ID: "node_modules/mid", Name: "mid", Version: "1.0.0"},
			{ID: "node_modules/leaf", Name: "leaf", Version: "1.0.0"},
		},
		Edges: []tree.Edge{
			{From: tree.Root, Name: "mid", Range: "1.0.0", Kind: tree.KindProd, To: "node_modules/mid"},
			{From: "node_modules/mid", Name: "leaf", Range: "1.0.0", Kind: tree.KindProd, To: "node_modules/leaf"},
		},
	}
	tr.Sort()
	docs := map[string]*remedy.Document{
		"mid": doc("mid", "1.1.0", map[string]map[string]string{"1.0.0": {"leaf": "1.0.0"},
			"1.1.0": {"old-leaf": "npm:leaf@1.0.0"}}),
		"leaf": doc("leaf", "1.0.1", map[string]map[string]string{"1.0.0": nil, "1.0.1": nil}),
	}
	f := remedy.Finding{Instance: "node_modules/leaf", Advisory: "GHSA-leaf", Fixed: "1.0.1"}
	got := remedy.Decide(remedy.Input{Tree: tr, Findings: []remedy.Finding{f}, Documents: docs})
	want := remedy.Fix{Kind: remedy.KindNoneYet, Component: "mid", PinnedBy: "mid", PinnedByVersion: "1.1.0", Package: "leaf",
		Range: "npm:leaf@1.0.0"}
	if !reflect.DeepEqual(got[0].Fix, want) {
		t.Errorf("%+v, want %+v", got[0].Fix, want)
	}
}
