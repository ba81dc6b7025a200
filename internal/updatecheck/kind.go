package updatecheck

import (
	"context"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// A source's kind (readmodel.SourceKind: a signed update document, an
// offline document, an npm package) is how the check, the import, the
// manifest sync, the skips, the feeds' re-evaluation and the re-offer read
// it. Each kind is one sourceKind, in a file set of its own (kind_*.go);
// the job and the stored document carry theirs, looked up once (kindOf),
// and nothing else asks which kind a source is: a new kind is one more
// sourceKind and one more row of kinds (archtest counts the kind tests
// outside the adapters).
type sourceKind interface {
	// fetched says whether the check fetches sources of this kind; the
	// others it leaves alone and counts (Result.Offline).
	fetched() bool
	// ready gives the kind's jobs of one check what they share before any
	// is fetched (an npm registry's keys, read once per registry).
	ready(ctx context.Context, c *Checker, jobs []*job) error
	// request is the fetch of j's source, or the failure that refuses it at
	// once, without a request (an npm package whose registry no setting
	// names). It may keep on j what prepare needs of it.
	request(c *Checker, j *job) (fetch.Request, failure)
	// prepare turns the answer to j's request into what to write: the
	// verdict, with no transaction open, then the evaluation. It reports
	// false when the check was cancelled.
	prepare(ctx context.Context, c *Checker, j job, epoch int64, resp fetch.Response, ferr error) (pending, bool)
	// evaluate is one component's result from d, a document of this kind
	// (stored or new), and what the feeds know (k).
	evaluate(d *docInput, k *knowledge, in store.ComponentInput, epoch int64) (store.Result, error)
	// stored is what the stored src answers for its components outside a
	// check (the manifest sync, a skip, the feeds' re-evaluation, the
	// re-offer): for each component's pin, the stored document to evaluate
	// it from, or nil when none may be trusted (the next check decides).
	stored(ctx context.Context, r *storedReads, src store.Source, core store.Component) (func(pin string) *docInput, error)
	// importable is nil when documents can be imported for sources of
	// this kind (Importer), else why not.
	importable() error
}

// kinds are the kinds of source, by readmodel's name for them.
var kinds = map[readmodel.SourceKind]sourceKind{
	readmodel.SourceDocument: documentKind{},
	readmodel.SourceOffline:  offlineKind{},
	readmodel.SourceNpm:      npmKind{},
}

// kindOf is the kind of the source at url: the one place the address is
// read for it.
func kindOf(url string) sourceKind { return kinds[readmodel.SourceKindOf(url)] }

// storedReads are what the kinds read of the store once per evaluation
// from stored documents, whatever the number of sources (the pinned keys of
// the npm registries).
type storedReads struct {
	w      *writer
	pinned map[string]store.RegistryKeys // nil until asked (registryKeys)
	// scopeBursts are the bursts across a scope stored, nil until an npm
	// source asks (npmKind.stored).
	scopeBursts map[string]map[string]map[string]store.NpmScopeBurst
}

// ready gives each kind its jobs (ready), in the order of kinds' names.
func (c *Checker) ready(ctx context.Context, jobs []job) error {
	for _, name := range readmodel.AllSourceKinds() {
		k := kinds[name]
		var of []*job
		for i := range jobs {
			if jobs[i].kind == k {
				of = append(of, &jobs[i])
			}
		}
		if len(of) == 0 {
			continue
		}
		if err := k.ready(ctx, c, of); err != nil {
			return err
		}
	}
	return nil
}
