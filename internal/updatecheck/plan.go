package updatecheck

import (
	"context"
	"time"

	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// What a check fetches: the components grouped by source, with what is
// stored of each source.

// job is one source to fetch and the components it serves.
type job struct {
	url        string
	key        string           // the pin (canonical text), "" for unsigned
	trust      trust            // the keys trusted now under the pin
	stored     store.Source     // zero when the source was never written
	sequences  map[string]int64 // rollback state: pin -> highest sequence
	core       string           // the installed core when the check began
	components []store.Component
	// skips are the skipped versions of the components, by code, when the
	// check began.
	skips map[string]string
	// corePackage is the core's npm package ("" when the core is not an
	// npm package): a release's peerDependencies on it are the core it
	// requires.
	corePackage string
	// An npm source: its package, and its registry's keys during this
	// check (shared by the sources of one registry; nil when no setting
	// names its registry: the source fails, saying which is missing).
	pkg     npm.Name
	npmKeys *registryKeys
	// intel is what the feeds know, read once per check after the feeds
	// synced (nil: nothing; the check then evaluates without them).
	intel *knowledge
}

// inputs are the job's components as evaluation inputs, as read when the
// check began; the guarded write refuses them if they changed since.
func (j job) inputs() []store.ComponentInput {
	out := make([]store.ComponentInput, len(j.components))
	for i, comp := range j.components {
		out[i] = store.ComponentInput{Code: comp.Code, InstalledVersion: comp.InstalledVersion, CoreVersion: j.core, Package: comp.Package,
			Policy: comp.Policy, Skipped: j.skips[comp.Code]}
	}
	return out
}

// plan reads the components, the stored sources, their rollback state and
// trusted keys, and groups the components by source.
func (w *writer) plan(ctx context.Context) ([]job, error) {
	components, err := w.store.Components(ctx)
	if err != nil {
		return nil, err
	}
	stored, err := w.store.Sources(ctx)
	if err != nil {
		return nil, err
	}
	sequences, err := w.store.SourceSequences(ctx)
	if err != nil {
		return nil, err
	}
	trusts, err := w.store.SourceTrusts(ctx)
	if err != nil {
		return nil, err
	}
	skips, err := w.store.Skips(ctx)
	if err != nil {
		return nil, err
	}
	jobs := plan(components, stored, sequences, trusts)
	for i := range jobs {
		jobs[i].skips = make(map[string]string)
		for _, comp := range jobs[i].components {
			if s, ok := skips[comp.Code]; ok {
				jobs[i].skips[comp.Code] = s.Version
			}
		}
	}
	return jobs, nil
}

// fetchable leaves out the offline sources, which are never fetched (their
// documents come by import), and counts them.
func fetchable(jobs []job) ([]job, int) {
	out := jobs[:0:0]
	for _, j := range jobs {
		if !updatedoc.IsOffline(j.url) {
			out = append(out, j)
		}
	}
	return out, len(jobs) - len(out)
}

// plan groups the components by source.
func plan(components []store.Component, stored []store.Source, sequences map[string]map[string]int64, trusts map[string]store.SourceTrust) []job {
	byURL := make(map[string]store.Source, len(stored))
	for _, s := range stored {
		byURL[s.URL] = s
	}
	core, corePackage := "", ""
	for _, comp := range components {
		if comp.Code == release.CoreCode {
			core, corePackage = comp.InstalledVersion, readmodel.PackageOf(comp.SourceURL)
		}
	}
	var jobs []job
	index := map[string]int{}
	for _, comp := range components {
		if comp.SourceURL == "" {
			continue
		}
		i, ok := index[comp.SourceURL]
		if !ok {
			jobs = append(jobs, job{url: comp.SourceURL, key: comp.PinnedKey, stored: byURL[comp.SourceURL],
				sequences: sequences[comp.SourceURL], core: core, corePackage: corePackage,
				trust: trustOf(comp.PinnedKey, trusts[comp.SourceURL])})
			i = len(jobs) - 1
			index[comp.SourceURL] = i
		}
		jobs[i].components = append(jobs[i].components, comp)
	}
	return jobs
}

// withRegistries gives each npm job its package and its registry's keys
// for this check (one registryKeys per registry, with the keys pinned for
// it).
func (c *Checker) withRegistries(ctx context.Context, jobs []job) ([]job, error) {
	var pinned map[string]store.RegistryKeys
	byRegistry := map[string]*registryKeys{}
	for i := range jobs {
		j := &jobs[i]
		if readmodel.SourceKindOf(j.url) != readmodel.SourceNpm {
			continue
		}
		name, err := npm.ParseSource(j.url)
		if err != nil {
			continue // the manifest refuses it; npmKeys nil: the source fails
		}
		j.pkg = name
		if c.npm == nil {
			continue
		}
		reg, err := c.npm.Registries.For(name)
		if err != nil {
			continue
		}
		if pinned == nil {
			if pinned, err = c.store.RegistryKeys(ctx); err != nil {
				return nil, err
			}
		}
		rk := byRegistry[reg.String()]
		if rk == nil {
			rk = &registryKeys{registry: reg.String()}
			if p, ok := pinned[reg.String()]; ok {
				rk.pinned = &p
			}
			byRegistry[reg.String()] = rk
		}
		j.npmKeys = rk
	}
	return jobs, nil
}

func expiry(d *updatedoc.Document) *time.Time {
	if d.Expires.IsZero() {
		return nil
	}
	t := d.Expires
	return &t
}
