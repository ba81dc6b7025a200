package web

import (
	"bytes"
	"context"
	"io"
	"sync"

	"github.com/a-h/templ"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// maxFragments bounds the rendered fragments kept for one snapshot.
const maxFragments = 256

// fragments keeps the parts of answers that depend on nothing but a
// catalog snapshot, the request's query and, for a page, the second it
// is rendered in (relative times: "3 minutes ago") and whether the
// advisory feeds were read (the empty pages' words): the catalog's table
// and the catalog API's JSON. A new snapshot drops them all, so a fragment
// is never older than the snapshot it was made from; a burst of requests
// for one page renders it once a second.
type fragments struct {
	mu    sync.Mutex
	snap  *catalog.Snapshot
	bytes map[fragmentKey][]byte
}

// fragmentKey names a fragment: its kind ("page", "api"), the catalog
// read it shows, the second of rendering (0 for an answer without
// relative times) and, for a page, the summary's feed facts it words.
type fragmentKey struct {
	kind          string
	status        readmodel.Filter
	search        string
	offset, limit int
	after         store.CatalogCursor // zero: none
	second        int64
	// whether the feeds that name malicious packages and exploited
	// advisories were read (a page's empty malicious and exploited words)
	malwareRead, exploitedRead bool
}

// keyOf is the key of the fragment that shows f.
func keyOf(kind string, f store.CatalogFilter, second int64) fragmentKey {
	k := fragmentKey{kind: kind, status: f.Status, search: f.Search, offset: f.Offset, limit: f.Limit, second: second}
	if f.After != nil {
		k.after = *f.After
	}
	return k
}

// get returns the fragment key names in snap, making it with build when it
// is not kept. Two requests that miss at once both make it; the first kept
// stays.
func (f *fragments) get(snap *catalog.Snapshot, key fragmentKey, build func() ([]byte, error)) ([]byte, error) {
	f.mu.Lock()
	if f.snap == snap {
		if b, ok := f.bytes[key]; ok {
			f.mu.Unlock()
			return b, nil
		}
	}
	f.mu.Unlock()
	b, err := build()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.snap != snap {
		if f.snap != nil && snap.ReadAt.Before(f.snap.ReadAt) {
			return b, nil // an older snapshot than the one kept: not worth keeping
		}
		f.snap, f.bytes = snap, newFragmentMap()
	}
	if len(f.bytes) >= maxFragments {
		f.bytes = newFragmentMap()
	}
	if kept, ok := f.bytes[key]; ok {
		return kept, nil
	}
	f.bytes[key] = b
	return b, nil
}

func newFragmentMap() map[fragmentKey][]byte { return make(map[fragmentKey][]byte, 16) }

// renderBytes renders a component into bytes.
func renderBytes(ctx context.Context, c templ.Component) ([]byte, error) {
	var buf bytes.Buffer
	if err := c.Render(ctx, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// rawHTML is already rendered HTML as a component.
func rawHTML(b []byte) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// keptBytes keeps answers made of one fleet read, by what they show (K),
// as fragments keeps the catalog's: a burst of requests for one answer
// makes it once a second. Each key names the read its rows came from
// (catalog.FleetPage.Read), so a new read is a new key; past
// maxFragments every key is dropped at once.
type keptBytes[K comparable] struct {
	mu    sync.Mutex
	bytes map[K][]byte
}

// fleetFragmentKey is everything the Fleet page's content shows: the
// read its rows came from, its totals, what was asked and the second of
// rendering (the last push's relative words).
type fleetFragmentKey struct {
	read    uint64
	summary readmodel.FleetSummary
	sort    readmodel.FleetSort
	filter  readmodel.FleetFilter
	query   string
	page    int
	more    bool
	second  int64
}

// get returns the answer key names, making it with build when it is not
// kept. Two requests that miss at once both make it; the first kept stays.
func (k *keptBytes[K]) get(key K, build func() ([]byte, error)) ([]byte, error) {
	k.mu.Lock()
	b, ok := k.bytes[key]
	k.mu.Unlock()
	if ok {
		return b, nil
	}
	b, err := build()
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.bytes == nil || len(k.bytes) >= maxFragments {
		k.bytes = make(map[K][]byte, 16)
	}
	if kept, ok := k.bytes[key]; ok {
		return kept, nil
	}
	k.bytes[key] = b
	return b, nil
}
