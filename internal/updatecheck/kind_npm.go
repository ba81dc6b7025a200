package updatecheck

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// npm sources ("npm:NAME") go through the check as documents do — the
// lease, one fetch through the guarded fetcher, a verdict with no I/O, the
// fenced write — with three differences:
//
//   - what is stored is not the registry's document (tens of megabytes for
//     a popular package) but what upcheck keeps of it (npm.Package, as
//     JSON), so that a component upgraded outside upcheck is evaluated
//     again from it at once, without a fetch;
//   - what a release is comes from the registry's own facts (npm.OfferFor:
//     dist-tags, publish times, deprecations, peerDependencies on the
//     core's package, registry signatures), and is then evaluated as a
//     document's releases are (release.Evaluate);
//   - trust is the registry's signing keys, pinned per registry on first
//     sight (registry_keys): a registry that publishes other keys later is a
//     trust event, written with the first of its sources.

// npmKind is the kind of the "npm:NAME" sources (readmodel.SourceNpm).
type npmKind struct{}

func (npmKind) fetched() bool { return true }

// importable: an npm package is read from its registry only.
func (npmKind) importable() error { return ErrNpmSource }

// ready gives each npm job its package and its registry's keys for this
// check (one registryKeys per registry, with the keys pinned for it).
func (npmKind) ready(ctx context.Context, c *Checker, jobs []*job) error {
	var pinned map[string]store.RegistryKeys
	byRegistry := map[string]*registryKeys{}
	deps := checkDeps(ctx, c)
	bundles := &provenanceBundles{limit: MaxProvenanceBundles}
	var scopes *scopeLedger
	if len(jobs) > 0 {
		stored, err := c.store.NpmScopeBursts(ctx)
		if err != nil {
			return err
		}
		scopes = newScopeLedger(stored)
		deps.scopes = scopes
	}
	for _, j := range jobs {
		n := &npmJob{deps: deps, bundles: bundles, scopes: scopes}
		j.state = n
		name, err := npm.ParseSource(j.url)
		if err != nil {
			continue // the manifest refuses it; keys nil: the source fails
		}
		n.pkg = name
		if c.npm == nil {
			continue
		}
		reg, err := c.npm.Registries.For(name)
		if err != nil {
			continue
		}
		if pinned == nil {
			if pinned, err = c.store.RegistryKeys(ctx); err != nil {
				return err
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
		n.keys = rk
	}
	return nil
}

// npmJob is what npmKind keeps of a job during one check.
type npmJob struct {
	pkg npm.Name
	// keys are its registry's keys during this check (shared by the
	// sources of one registry; nil when no setting names its registry: the
	// source fails, saying which is missing).
	keys *registryKeys
	// request is the fetch of the package (request), read by prepare.
	request *npm.PackageRequest
	// deps are the added dependencies' documents of this check, shared
	// by its npm sources.
	deps *dependencyDocs
	// bundles bound the attestation bundles this check fetches, shared
	// by its npm sources.
	bundles *provenanceBundles
	// scopes are the check's scoped packages' publish times and the
	// versions whose signals its sources said, for the bursts across a
	// scope (scopeBurstStep), shared by its npm sources.
	scopes *scopeLedger
	// floor is the lowest installed version of its components, from
	// which the package's dependencies are kept (keepDependencies).
	floor string
}

// npmOf is what npmKind keeps of j (ready); nothing yet when ready did
// not see it.
func npmOf(j *job) *npmJob {
	if n, ok := j.state.(*npmJob); ok {
		return n
	}
	return &npmJob{}
}

// stored is the stored package of src for every component, verified with
// the keys pinned for the registry it was read from; nil when none can be
// used (the next check decides).
func (npmKind) stored(ctx context.Context, r *storedReads, src store.Source, core store.Component) (func(pin string) *docInput, error) {
	if r.pinned == nil {
		var err error
		if r.pinned, err = r.w.store.RegistryKeys(ctx); err != nil {
			return nil, err
		}
	}
	var rk *store.RegistryKeys
	if k, found := r.pinned[src.Registry]; found {
		rk = &k
	}
	var d *docInput
	if keys, ok := r.w.pinnedKeys(rk); ok {
		d = storedNpm(src, r.w.storedPackage(src), keys, readmodel.PackageOf(core.SourceURL))
	}
	if d != nil {
		deps, err := r.w.storedDependencies(ctx, src.Registry, d.npm.pkg)
		if err != nil {
			return nil, err
		}
		d.npm.deps = deps
		if d.npm.provenance, err = r.w.storedProvenance(ctx, src.Registry, d.npm.pkg); err != nil {
			return nil, err
		}
		if r.scopeBursts == nil {
			if r.scopeBursts, err = r.w.store.NpmScopeBursts(ctx); err != nil {
				return nil, err
			}
		}
		d.npm.scopeBursts = storedScopeBursts(r.scopeBursts, src.Registry, d.npm.pkg.Name)
	}
	return func(string) *docInput { return d }, nil
}

// npmDoc is a package document ready to evaluate components against.
type npmDoc struct {
	pkg      *npm.Package
	registry string    // the registry's URL, no credentials
	keys     []npm.Key // the keys versions must be signed with; nil: the registry publishes none
	core     string    // the core's package name; "" when the core is not an npm package
	// deps are what is known of the documents of the dependencies its
	// offers add (readDependencies, or storedDependencies when evaluated
	// without a check); a dependency missing is said not read.
	deps map[string]dependencyRead
	// provenance is what is known of the repositories its versions'
	// provenance names (readProvenance, or storedProvenance when
	// evaluated without a check), by version; a version missing is said
	// not read.
	provenance map[string]provenanceRead
	// scopeBursts are the bursts across its scope stored of its versions
	// (scopeBurstStep), by version.
	scopeBursts map[string]scopeBurst
}

// npmInput is a docInput for an npm source: body is the stored form.
func npmInput(url string, body []byte, d *npmDoc) *docInput {
	h := sha256.Sum256(body)
	return &docInput{url: url, hash: h[:], kind: npmKind{}, npm: d}
}

// storedPackage is what is kept of src's package document (as stored in
// sources.document); nil when none is stored or it cannot be read (the
// next fetch replaces it), which is logged.
func (w *writer) storedPackage(src store.Source) *npm.Package {
	if src.Document == nil {
		return nil
	}
	var p npm.Package
	if err := json.Unmarshal(src.Document, &p); err != nil {
		w.logger.Warn("stored package document does not decode", "url", src.URL, "error", err)
		return nil
	}
	return &p
}

// pinnedKeys are the keys pinned for a registry (rk nil: none are); ok is
// false, and it is logged, when they do not parse.
func (w *writer) pinnedKeys(rk *store.RegistryKeys) (keys []npm.Key, ok bool) {
	if rk == nil {
		return nil, true
	}
	keys, err := npm.ParseKeys(bytes.NewReader(rk.Keys))
	if err != nil {
		w.logger.Warn("pinned registry keys do not parse", "registry", rk.Registry, "error", err)
		return nil, false
	}
	return keys, true
}

// storedNpm is the stored package pkg of the npm source src as a
// docInput, verified with keys; nil without a package.
func storedNpm(src store.Source, pkg *npm.Package, keys []npm.Key, corePackage string) *docInput {
	if pkg == nil {
		return nil
	}
	return npmInput(src.URL, src.Document, &npmDoc{pkg: pkg, registry: src.Registry, keys: keys, core: corePackage})
}

// request is the fetch of j's package document, or why it cannot be made
// (no registry is named for it); prepare reads its answer with it.
func (npmKind) request(c *Checker, j *job) (fetch.Request, failure) {
	n := npmOf(j)
	if c.npm == nil || n.keys == nil {
		return fetch.Request{}, failureOf(npm.ErrNoRegistry, "")
	}
	// Validators only for a package stored from the registry named now:
	// another registry's 304 would vouch for what it never sent.
	// And only for one that keeps the dependencies the fix step reads
	// (keepsDependencies): one stored without them is asked for whole.
	// Whether it kept them is read from its DependenciesFrom alone: the
	// stored package is read whole by prepare, one source at a time, not
	// held for every source while the check's requests wait (the all-304
	// check held all 500 of the bench's at once: 162 MiB).
	n.floor = componentsFloor(j.components)
	etag, lastModified := "", ""
	if j.stored.Document != nil && j.stored.Registry == n.keys.registry && storedKeepsDependencies(j.stored.Document, n.floor) {
		etag, lastModified = j.stored.ETag, j.stored.LastModified
	}
	pr, err := c.npm.PackageRequest(n.pkg, etag, lastModified)
	if err != nil {
		return fetch.Request{}, failureOf(err, "")
	}
	keepDependencies(pr, n.floor)
	n.request = pr
	return pr.Request, failure{}
}

// prepare turns one package fetch into what to write, as documentKind's
// does for documents: the registry's keys, then the verdict, then the
// evaluation. Whatever fails, the stored package keeps answering for the
// components. It reports false when the check was cancelled.
func (npmKind) prepare(ctx context.Context, c *Checker, j job, epoch int64, resp fetch.Response, ferr error) (pending, bool) {
	n := npmOf(&j)
	pr := n.request
	if ctx.Err() != nil || fetch.IsCancelled(ctx, ferr) {
		resp.Close() // Result, which would, is not called
		return pending{}, false
	}
	fetched, err := pr.Result(resp, ferr)
	stored := c.storedOf(j) // read once, and only when needed
	if err == nil && fetched.Package == nil && stored() == nil {
		// A 304 for a stored package that cannot be read (or none): ask
		// for the whole document, or every check would get the same 304.
		if whole, werr := c.npm.PackageRequest(n.pkg, "", ""); werr == nil {
			keepDependencies(whole, n.floor)
			resp, ferr = c.fetcher.Fetch(ctx, whole.Request)
			if fetch.IsCancelled(ctx, ferr) {
				return pending{}, false
			}
			fetched, err = whole.Result(resp, ferr)
		}
	}
	p := pending{job: j, etag: resp.ETag, lastModified: resp.LastModified}
	// The keys, also when the fetch failed: the stored package keeps
	// answering, verified with them.
	if !n.keys.resolve(ctx, c, n.pkg) {
		return pending{}, false
	}
	if err == nil && n.keys.fail.failed() {
		err = errors.New(n.keys.fail.detail)
		p.failure = n.keys.fail
	}
	keys := n.keys.keys
	switch {
	case err != nil:
		if !p.failure.failed() {
			p.failure = failureOf(err, "")
		}
		p.doc = storedNpm(j.stored, stored(), keys, j.corePackage)
	case fetched.Package == nil: // 304
		if p.doc = storedNpm(j.stored, stored(), keys, j.corePackage); p.doc == nil {
			p.failure = notModifiedFailure(errors.New("no package document is stored"))
		} else {
			p.notModified = true
			p.trustState, p.verifiedBy = npmTrust(keys)
		}
	default:
		if pr.Keep != nil {
			fetched.Package.DependenciesFrom = n.floor
		}
		body, err := json.Marshal(fetched.Package)
		if err != nil {
			p.failure = failure{kind: readmodel.ErrorOther, detail: fmt.Sprintf("encode the package document: %v", err)}
			break
		}
		state, verifiedBy := npmTrust(keys)
		p.newDocument = true
		p.document = store.SourceDocument{URL: j.url, Document: body, ETag: resp.ETag, LastModified: resp.LastModified,
			SignatureState: state, VerifiedBy: verifiedBy, Registry: n.keys.registry, Epoch: epoch}
		p.doc = npmInput(j.url, body, &npmDoc{pkg: fetched.Package, registry: n.keys.registry, keys: keys, core: j.corePackage})
	}
	// The keys verified with are pinned (and said) with this source's row,
	// whether it succeeded or not: its stored package was evaluated with
	// them either way.
	p.registryChange = n.keys.claim()
	if p.doc != nil && n.scopes != nil {
		p.doc.npm.scopeBursts = storedScopeBursts(n.scopes.stored, p.doc.npm.registry, p.doc.npm.pkg.Name)
	}
	return c.evaluateWithReads(ctx, j, n, p, epoch)
}

// evaluateWithReads evaluates p once for what it offers, then again,
// once, with what the check read of the added dependencies and the
// provenance of the versions it offers, when it read any; the scope's
// burst step is told what was prepared. It reports false when the check
// was cancelled.
func (c *Checker) evaluateWithReads(ctx context.Context, j job, n *npmJob, p pending, epoch int64) (pending, bool) {
	p = evaluated(p, epoch)
	p, deps, ok := c.readDependencies(ctx, p, n.deps)
	if !ok {
		return p, false
	}
	p, prov, ok := c.readProvenance(ctx, p, n.bundles)
	if !ok {
		return p, false
	}
	if deps || prov {
		p = evaluated(p, epoch)
	}
	if p.doc != nil {
		n.scopes.prepared(j, p.doc.npm, p.results)
	}
	return p, true
}

// npmTrust is an npm source's trust state (sources.signature_state) and
// the keys its versions are verified with, by id: unsigned when its
// registry publishes no keys.
func npmTrust(keys []npm.Key) (state, verifiedBy string) {
	if len(keys) == 0 {
		return string(readmodel.TrustUnsigned), ""
	}
	return string(readmodel.TrustVerified), strings.Join(npm.KeyIDs(keys), " ")
}

// storedOf reads j's stored package the first time the returned func is
// called: nil when none can be used (storedPackage), or it was stored from
// another registry than the one named now (it would be verified with keys
// that never signed it; the results evaluated from it stay until the new
// registry answers).
func (c *Checker) storedOf(j job) func() *npm.Package {
	var pkg *npm.Package
	var once sync.Once
	return func() *npm.Package {
		once.Do(func() {
			if j.stored.Registry == npmOf(&j).keys.registry {
				pkg = c.storedPackage(j.stored)
			}
		})
		return pkg
	}
}
