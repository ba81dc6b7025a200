package updatecheck

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/upcheck/upcheck/internal/osv"
	"github.com/upcheck/upcheck/internal/store"
)

// knowledge is what the advisory feeds stored, as one evaluation reads it
// (docs/feeds.md): the OSV records naming the packages evaluated, the KEV
// catalogue and the EPSS scores, at one version of the feeds' advisories.
// A result records that version, and its write is refused when a feed
// changed an advisory of the component after it (intel_marks), so a result
// evaluated from older advisories never overwrites a newer evaluation.
//
// The version is read before the data: data newer than its version can
// only make a write refused that could have been kept, never the other
// way round.
type knowledge struct {
	version int64
	// now is the database's clock when the knowledge was read, at the
	// local (monotonic) instant readAt: the soak of a policy is judged on
	// the database's clock as it is when a component is evaluated
	// (knowledge.clock), so that a check whose fetches take minutes does
	// not judge its last source at its start and write "waits" over the
	// re-evaluation's "offered" (docs/policy.md).
	now    time.Time
	readAt time.Time
	osv    map[string][]*osv.Record // by npm package name
	kev    map[string]store.KEVEntry
	epss   map[string]store.EPSSScore
}

// clock is the database's clock now, as the knowledge's read of it and
// the local time since tell it; the local clock for a knowledge read
// without the database's (noKnowledge).
func (k *knowledge) clock() time.Time {
	if k.now.IsZero() {
		return time.Now()
	}
	return k.now.Add(time.Since(k.readAt))
}

// npmEcosystem is OSV's name of the npm ecosystem, as its records spell it.
const npmEcosystem = "npm"

// noKnowledge is what an evaluation knows before any feed synced.
var noKnowledge = &knowledge{}

// intelCache keeps the KEV catalogue and the EPSS scores of one version of
// the feeds: they are read whole (EPSS has a quarter of a million scores)
// and change once a day, while every check and sync evaluates.
type intelCache struct {
	mu      sync.Mutex
	version int64
	loaded  bool
	kev     map[string]store.KEVEntry
	epss    map[string]store.EPSSScore
}

// knowledge reads what the feeds stored for the given npm packages.
func (w *writer) knowledge(ctx context.Context, packages []string) (*knowledge, error) {
	version, now, err := w.store.IntelVersionNow(ctx)
	if err != nil {
		return nil, err
	}
	if version == 0 {
		return &knowledge{now: now, readAt: time.Now()}, nil // no feed ever stored anything
	}
	k := &knowledge{version: version, now: now, readAt: time.Now(), osv: map[string][]*osv.Record{}}
	if k.kev, k.epss, err = w.intel.catalogues(ctx, w.store, version); err != nil {
		return nil, err
	}
	packages = slices.Compact(slices.Sorted(slices.Values(slices.DeleteFunc(slices.Clone(packages),
		func(p string) bool { return p == "" }))))
	if len(packages) == 0 {
		return k, nil
	}
	bodies, err := w.store.OSVForPackages(ctx, npmEcosystem, packages)
	if err != nil {
		return nil, err
	}
	if w.afterKnowledge != nil {
		defer w.afterKnowledge()
	}
	for name, recs := range bodies {
		for _, body := range recs {
			r, err := osv.Parse(body)
			if err != nil {
				// Stored only after it parsed: a record this build cannot
				// read is left out, and says so in the log.
				w.logger.WarnContext(ctx, "a stored OSV record does not parse", "package", name, "error", err)
				continue
			}
			k.osv[name] = append(k.osv[name], r)
		}
	}
	return k, nil
}

// catalogues returns the KEV catalogue and the EPSS scores at version,
// reading them again when the feeds moved since the last read.
func (c *intelCache) catalogues(ctx context.Context, st *store.Store, version int64) (map[string]store.KEVEntry, map[string]store.EPSSScore, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loaded && c.version == version {
		return c.kev, c.epss, nil
	}
	kev, err := st.KEV(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("read the KEV catalogue: %w", err)
	}
	epss, err := st.EPSS(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("read the EPSS scores: %w", err)
	}
	c.version, c.loaded, c.kev, c.epss = version, true, kev, epss
	return kev, epss, nil
}

// packagesOf lists the packages of inputs.
func packagesOf(inputs []store.ComponentInput) []string {
	out := make([]string, 0, len(inputs))
	for _, in := range inputs {
		if in.Package != "" {
			out = append(out, in.Package)
		}
	}
	return out
}

// advisoryKeys are an advisory's id and aliases, upper-cased: the keys by
// which advisories are one (osv.AdvisoryKeys, as the feed sync stores them).
func advisoryKeys(id string, aliases []string) []string { return osv.AdvisoryKeys(id, aliases) }
