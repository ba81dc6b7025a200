package npm

import (
	"slices"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/release"
)

func testPackage(name string, tags map[string]string, versions map[string]Version) *Package {
	p := &Package{Name: name, DistTags: tags, Versions: versions, Published: map[string]time.Time{}}
	for v := range versions {
		p.Published[v] = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return p
}

func versionsOf(o Offer) []string {
	var out []string
	for _, r := range o.Package.Releases {
		out = append(out, r.Version)
	}
	return out
}

func TestOfferFollowsLatestAndNeverADeprecatedVersion(t *testing.T) {
	t.Parallel()
	pkg := testPackage("@acme/blog", map[string]string{"latest": "2.1.0", "next": "3.0.0-rc.1", "beta": "2.2.0-beta.1"}, map[string]Version{
		"1.0.0":        {Deprecated: "has a data loss bug"},
		"1.1.0":        {},
		"2.0.0":        {Deprecated: "broken build"},
		"2.1.0":        {PeerDependencies: map[string]string{"@vitnode/core": "^2.1.0", "react": "^19"}},
		"2.2.0-beta.1": {},
		"2.3.0":        {}, // newer than latest: published under no tag for everyone
		"3.0.0-rc.1":   {},
		"not-semver":   {},
	})
	o := OfferFor(pkg, "1.0.0", "@vitnode/core", nil)
	if got := versionsOf(o); !slices.Equal(got, []string{"2.1.0", "1.1.0"}) {
		t.Errorf("offered %v, want [2.1.0 1.1.0]", got)
	}
	if o.Deprecated != "has a data loss bug" || o.Unlisted {
		t.Errorf("installed: deprecated %q, unlisted %v", o.Deprecated, o.Unlisted)
	}
	if r := o.Package.Releases[0]; r.RequiresCore != "^2.1.0" || r.Released.IsZero() {
		t.Errorf("2.1.0: requires core %q, released %v", r.RequiresCore, r.Released)
	}
	// One evaluation for both kinds of source: the core at 2.0 cannot run
	// 2.1.0, so 1.1.0 is the update and 2.1.0 is blocked.
	ev, err := release.Evaluate(&o.Package, "blog", "1.0.0", "2.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if ev.Update == nil || ev.Update.Version != "1.1.0" || !ev.NeedsNewerCore || ev.BlockedUpdate.Version != "2.1.0" {
		t.Errorf("evaluation: update %v, blocked %v", ev.Update, ev.BlockedUpdate)
	}
	if core := OfferFor(pkg, "1.0.0", "@acme/blog", nil); core.Package.Releases[0].RequiresCore != "" {
		t.Error("the core's own package requires no core")
	}
}

func TestAnInstalledPrereleaseFollowsItsLine(t *testing.T) {
	t.Parallel()
	pkg := testPackage("x", map[string]string{"latest": "1.0.0", "next": "2.0.0-rc.3", "canary": "3.0.0-alpha.1"}, map[string]Version{
		"1.0.0":         {},
		"2.0.0-rc.1":    {},
		"2.0.0-rc.2":    {Deprecated: "bad"},
		"2.0.0-rc.2.1":  {},
		"2.0.0-rc.3":    {},
		"2.0.0-rc.4":    {}, // newer than the tag
		"3.0.0-alpha.1": {},
	})
	if got := versionsOf(OfferFor(pkg, "2.0.0-rc.1", "", nil)); !slices.Equal(got, []string{"2.0.0-rc.3", "2.0.0-rc.2.1", "2.0.0-rc.1"}) {
		t.Errorf("rc.1 is offered %v", got)
	}
	// A stable site is never offered a prerelease.
	if got := versionsOf(OfferFor(pkg, "1.0.0", "", nil)); !slices.Equal(got, []string{"1.0.0"}) {
		t.Errorf("1.0.0 is offered %v", got)
	}
	// No tag names a newer prerelease of rc.3's line: prereleases are not offered.
	if got := versionsOf(OfferFor(pkg, "2.0.0-rc.3", "", nil)); !slices.Equal(got, []string{"1.0.0"}) {
		t.Errorf("rc.3 is offered %v", got)
	}
	// Once 2.0.0 is latest, the prerelease site gets the release.
	pkg.Versions["2.0.0"] = Version{}
	pkg.DistTags["latest"] = "2.0.0"
	ev, err := release.Evaluate(ptr(OfferFor(pkg, "2.0.0-rc.3", "", nil).Package), "x", "2.0.0-rc.3", "1.0.0")
	if err != nil || ev.Update == nil || ev.Update.Version != "2.0.0" {
		t.Errorf("rc.3 after the release: %v, %v", ev.Update, err)
	}
}

func TestAnUnlistedInstalledVersionIsSaid(t *testing.T) {
	t.Parallel()
	o := OfferFor(testPackage("x", map[string]string{"latest": "1.0.0"}, map[string]Version{"1.0.0": {}}), "0.9.0", "", nil)
	if !o.Unlisted || o.Deprecated != "" {
		t.Errorf("unlisted %v, deprecated %q", o.Unlisted, o.Deprecated)
	}
	// No latest tag: nothing stable is offered.
	if got := versionsOf(OfferFor(testPackage("x", map[string]string{}, map[string]Version{"1.0.0": {}}), "0.9.0", "", nil)); len(got) != 0 {
		t.Errorf("without a latest tag: offered %v", got)
	}
}

func ptr[T any](v T) *T { return &v }

// A version whose publish time is later than the document's last change
// is dated after the fact (ReleasedLate), so no soak can start from it; a
// document that gives no modified time makes no such claim.
func TestOfferSaysAPublishTimeLaterThanTheDocument(t *testing.T) {
	t.Parallel()
	pkg := testPackage("late", map[string]string{"latest": "1.2.0"}, map[string]Version{"1.0.0": {}, "1.1.0": {}, "1.2.0": {}})
	modified := pkg.Published["1.1.0"]
	pkg.Published["1.2.0"] = modified.Add(time.Hour)
	pkg.Modified = modified
	late := func(o Offer) map[string]bool {
		out := map[string]bool{}
		for _, r := range o.Package.Releases {
			out[r.Version] = r.ReleasedLate
		}
		return out
	}
	if got := late(OfferFor(pkg, "1.0.0", "", nil)); !got["1.2.0"] || got["1.1.0"] || got["1.0.0"] {
		t.Errorf("released late: %v, want 1.2.0 only", got)
	}
	pkg.Modified = time.Time{}
	if got := late(OfferFor(pkg, "1.0.0", "", nil)); got["1.2.0"] {
		t.Errorf("released late with no modified time: %v, want none", got)
	}
}
