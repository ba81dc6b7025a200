package updatecheck

import (
	"context"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
)

// What a check fetches: every site's components grouped by source, with
// what is stored of each source. A source is one job however many sites'
// components use it: fetched once, each component evaluated from the one
// document under its own site's core, policy, skip and approvals.

// job is one source to fetch and the components it serves, every site's.
type job struct {
	url       string
	kind      sourceKind       // how the source is read (kindOf)
	key       string           // the pin (canonical text), "" for unsigned
	trust     trust            // the keys trusted now under the pin
	stored    store.Source     // zero when the source was never written
	sequences map[string]int64 // rollback state: pin -> highest sequence
	// cores are each site's installed core when the check began, by site
	// ("" none: a registered site's lockfile may name no core).
	cores      map[int64]string
	components []store.Component
	// skips are the skipped versions of the components, by component,
	// when the check began.
	skips map[store.ComponentKey]string
	// approvals are the components' approvals as evaluation reads them
	// (store.ComponentInput.Approvals), by component, when the check began.
	approvals map[store.ComponentKey]string
	// corePackage is the local site's core's npm package ("" when the core
	// is not an npm package): a release's peerDependencies on it are the
	// core it requires.
	corePackage string
	// state is what the source's kind keeps of it during one check
	// (its ready and request), for its prepare; nil for a kind that keeps
	// nothing.
	state any
	// intel is what the feeds know, read once per check after the feeds
	// synced (nil: nothing; the check then evaluates without them).
	intel *knowledge
}

// inputs are the job's components as evaluation inputs, as read when the
// check began; the guarded write refuses them if they changed since.
func (j job) inputs() []store.ComponentInput {
	out := make([]store.ComponentInput, len(j.components))
	for i, comp := range j.components {
		out[i] = store.ComponentInput{Site: comp.Site, Code: comp.Code, InstalledVersion: comp.InstalledVersion,
			CoreVersion: j.cores[comp.Site], Package: comp.Package, Policy: comp.Policy, Skipped: j.skips[comp.Key()],
			Approvals: j.approvals[comp.Key()]}
	}
	return out
}

// plan reads every site's components, the stored sources, their rollback
// state and trusted keys, and groups the components by source.
func (w *writer) plan(ctx context.Context) ([]job, error) {
	components, err := w.store.FleetComponents(ctx)
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
	skips, err := w.store.FleetSkippedVersions(ctx)
	if err != nil {
		return nil, err
	}
	approvals, err := w.store.FleetApprovalInputs(ctx)
	if err != nil {
		return nil, err
	}
	jobs := plan(components, stored, sequences, trusts)
	for i := range jobs {
		jobs[i].skips = make(map[store.ComponentKey]string)
		jobs[i].approvals = make(map[store.ComponentKey]string)
		for _, comp := range jobs[i].components {
			if s, ok := skips[comp.Key()]; ok {
				jobs[i].skips[comp.Key()] = s
			}
			if a, ok := approvals[comp.Key()]; ok {
				jobs[i].approvals[comp.Key()] = a
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
		if j.kind.fetched() {
			out = append(out, j)
		}
	}
	return out, len(jobs) - len(out)
}

// plan groups the components, every site's, by source.
func plan(components []store.Component, stored []store.Source, sequences map[string]map[string]int64, trusts map[string]store.SourceTrust) []job {
	byURL := make(map[string]store.Source, len(stored))
	for _, s := range stored {
		byURL[s.URL] = s
	}
	cores, corePackage := map[int64]string{}, ""
	for _, comp := range components {
		if comp.Code == release.CoreCode {
			cores[comp.Site] = comp.InstalledVersion
			if comp.Site == store.LocalSite {
				corePackage = readmodel.PackageOf(comp.SourceURL)
			}
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
			jobs = append(jobs, job{url: comp.SourceURL, kind: kindOf(comp.SourceURL), key: comp.PinnedKey, stored: byURL[comp.SourceURL],
				sequences: sequences[comp.SourceURL], cores: cores, corePackage: corePackage,
				trust: trustOf(comp.PinnedKey, trusts[comp.SourceURL])})
			i = len(jobs) - 1
			index[comp.SourceURL] = i
		}
		jobs[i].components = append(jobs[i].components, comp)
	}
	return jobs
}
