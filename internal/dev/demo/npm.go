package demo

import (
	"time"

	"github.com/upcheck/upcheck/internal/dev/npmreg"
)

// RegistryPath is where the demo answers as an npm registry, below its
// address: the registry's URL is the demo's base + RegistryPath.
const RegistryPath = "/npm/"

// Scope is the demo packages' npm scope.
const Scope = "@demo"

// CorePackage is the demo core's npm package: plugins' peerDependencies on
// it give the core they require.
const CorePackage = Scope + "/core"

// demoPackage is a demo package; its last version is dist-tags.latest.
type demoPackage struct {
	name        string
	description string
	versions    []demoVersion // oldest first
}

// demoVersion is one published version of a demo package.
type demoVersion struct {
	version string
	npmreg.Version
}

// newRegistry makes the demo packages in the one fake registry
// (internal/dev/npmreg), answering below RegistryPath, with released as the
// newest releases' publish time, every version packed as npm packs one and
// signed with a fresh key: the demo keeps no secret.
func newRegistry(released time.Time) (*npmreg.Registry, error) {
	r, err := npmreg.New(RegistryPath)
	if err != nil {
		return nil, err
	}
	day := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
	released = released.UTC().Truncate(time.Second)
	for _, p := range []demoPackage{
		{name: CorePackage, description: "The demo site's core", versions: []demoVersion{
			{"1.9.0", npmreg.Version{Published: day("2026-09-01T10:00:00Z"), Provenance: true}},
			{"1.10.0", npmreg.Version{Published: released, Provenance: true}},
		}},
		{name: Scope + "/seo", description: "Search engine tags for every page", versions: []demoVersion{
			{"2.0.0", npmreg.Version{Published: day("2026-06-10T09:00:00Z"),
				Deprecated: "2.0.0 sends unpublished drafts to search engines: upgrade to 2.0.1"}},
			{"2.0.1", npmreg.Version{Published: day("2026-06-12T09:00:00Z")}},
		}},
		{name: Scope + "/search", description: "Full-text search", versions: []demoVersion{
			{"3.0.0", npmreg.Version{Published: day("2026-08-01T12:00:00Z"), Peers: map[string]string{CorePackage: "^1.8.0"}}},
			{"3.1.0", npmreg.Version{Published: released, Peers: map[string]string{CorePackage: ">=2.0.0"}}},
		}},
		{name: Scope + "/comments", description: "Comments under articles", versions: []demoVersion{
			{"1.2.0", npmreg.Version{Published: day("2026-07-20T08:00:00Z"), Provenance: true}},
			{"1.3.0", npmreg.Version{Published: released}},
		}},
		{name: Scope + "/analytics", description: "Privacy-friendly visitor counts", versions: []demoVersion{
			{"0.4.0", npmreg.Version{Published: day("2026-05-05T15:00:00Z"), Provenance: true}},
			{"0.5.0", npmreg.Version{Published: released, Provenance: true}},
		}},
	} {
		versions := map[string]npmreg.Version{}
		for _, v := range p.versions {
			versions[v.version] = v.Version
		}
		if err := r.Publish(p.name, p.versions[len(p.versions)-1].version, versions); err != nil {
			return nil, err
		}
		if err := r.SetDescription(p.name, p.description); err != nil {
			return nil, err
		}
	}
	return r, nil
}
