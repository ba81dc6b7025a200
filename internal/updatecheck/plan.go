package updatecheck

import (
	"context"
	"time"

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
}

// inputs are the job's components as evaluation inputs, as read when the
// check began; the guarded write refuses them if they changed since.
func (j job) inputs() []store.ComponentInput {
	out := make([]store.ComponentInput, len(j.components))
	for i, comp := range j.components {
		out[i] = store.ComponentInput{Code: comp.Code, InstalledVersion: comp.InstalledVersion, CoreVersion: j.core}
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
	return plan(components, stored, sequences, trusts), nil
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
	core := ""
	for _, comp := range components {
		if comp.Code == updatedoc.CoreCode {
			core = comp.InstalledVersion
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
				sequences: sequences[comp.SourceURL], core: core, trust: trustOf(comp.PinnedKey, trusts[comp.SourceURL])})
			i = len(jobs) - 1
			index[comp.SourceURL] = i
		}
		jobs[i].components = append(jobs[i].components, comp)
	}
	return jobs
}

func expiry(d *updatedoc.Document) *time.Time {
	if d.Expires.IsZero() {
		return nil
	}
	t := d.Expires
	return &t
}
