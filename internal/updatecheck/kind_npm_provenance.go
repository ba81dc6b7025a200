// The repository an offered npm version's provenance names (docs/npm.md
// "What an update brings"): read from its attestation bundle, fetched
// once per version ever (a published version's attestations do not
// change), at most MaxProvenanceBundles a check, and compared with the
// package's repository.

package updatecheck

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// MaxProvenanceBundles is how many attestation bundles one check fetches
// at most, for all its npm sources: a version past it whose bundle was
// never read is said not read until a later check reads it.
const MaxProvenanceBundles = 100

// provenanceRead is what a check knows of one version's provenance: the
// repository it names ("" none that reads), or why it was not read.
type provenanceRead struct {
	repository string
	unread     readmodel.ProvenanceUnreadReason
}

// provenanceBundles is one check's bound on bundle fetches, shared by its
// npm sources.
type provenanceBundles struct {
	mu      sync.Mutex
	limit   int
	fetched int
}

// claim takes a fetch of the check's bound; false past it.
func (b *provenanceBundles) claim() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fetched >= b.limit {
		return false
	}
	b.fetched++
	return true
}

// attested are the versions of pkg among versions that say they were
// published with provenance (an attestation bundle's address), sorted.
func attested(pkg *npm.Package, versions []string) []string {
	var out []string
	for _, v := range versions {
		if a := pkg.Versions[v].Dist.Attestations; a != nil && a.URL != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// signalVersions are the versions whose signals r's evaluation said: its
// offered update and a release held for an approval (approvalFacts).
func signalVersions(r store.Result) []string {
	var out []string
	if r.UpdateVersion != "" {
		out = append(out, r.UpdateVersion)
	}
	if bytes.Contains(r.RegistryFacts, []byte(`"approval"`)) {
		var f struct {
			Approval *readmodel.ApprovalAsk `json:"approval"`
		}
		if json.Unmarshal(r.RegistryFacts, &f) == nil && f.Approval != nil && !f.Approval.Offered {
			out = append(out, f.Approval.Version)
		}
	}
	return out
}

// readProvenance reads, for the versions p's results say signals of that
// were published with provenance, the repository each names: stored by an
// earlier check, or fetched now (within the check's bound) and kept in p
// to store. It sets p's npmDoc's provenance and reports whether any
// version needed it (p is then to be evaluated again); false ok when the
// check was cancelled. A package that names no repository fetches
// nothing: there is nothing to compare with.
func (c *Checker) readProvenance(ctx context.Context, p pending, bundles *provenanceBundles) (pending, bool, bool) {
	if p.doc == nil || p.doc.npm == nil || bundles == nil || c.npm == nil {
		return p, false, true
	}
	n := p.doc.npm
	var asked []string
	for _, r := range p.results {
		asked = append(asked, signalVersions(r)...)
	}
	versions := attested(n.pkg, asked)
	if len(versions) == 0 || n.pkg.Repository == "" {
		return p, false, true
	}
	read := make(map[string]provenanceRead, len(versions))
	stored, err := c.store.NpmProvenanceOf(ctx, n.registry, n.pkg.Name, versions)
	if err != nil {
		if ctx.Err() != nil {
			return p, false, false
		}
		c.logger.WarnContext(ctx, "the stored provenance was not read", "url", p.job.url, "error", err)
	}
	var reqs []fetch.Request
	var brs []*npm.BundleRequest
	var at []string
	for _, v := range versions {
		if repo, ok := stored[v]; ok {
			read[v] = provenanceRead{repository: repo}
			continue
		}
		if !bundles.claim() {
			read[v] = provenanceRead{unread: readmodel.ProvenancePastBound}
			continue
		}
		br, err := c.npm.BundleRequest(n.pkg.Versions[v].Dist.Attestations.URL)
		if err != nil {
			c.logger.WarnContext(ctx, "a provenance bundle was not read", "package", n.pkg.Name, "version", v, "error", err)
			read[v] = provenanceRead{unread: readmodel.ProvenanceFailed}
			continue
		}
		reqs, brs, at = append(reqs, br.Request), append(brs, br), append(at, v)
	}
	var mu sync.Mutex
	var rows []store.NpmProvenance
	err = c.npm.Fetcher.Run(ctx, reqs, func(ctx context.Context, k int, resp fetch.Response, err error) {
		resp.Close()
		v := at[k]
		r := provenanceRead{repository: brs[k].Repository}
		if err != nil {
			if ctx.Err() == nil {
				c.logger.WarnContext(ctx, "a provenance bundle was not read", "package", n.pkg.Name, "version", v, "error", err)
			}
			r = provenanceRead{unread: readmodel.ProvenanceFailed}
		}
		mu.Lock()
		defer mu.Unlock()
		read[v] = r
		if err == nil {
			rows = append(rows, store.NpmProvenance{Registry: n.registry, Name: n.pkg.Name, Version: v, Repository: r.repository})
		}
	})
	if ctx.Err() != nil {
		return p, false, false
	}
	if err != nil {
		c.logger.WarnContext(ctx, "the provenance bundles were not read", "url", p.job.url, "error", err)
	}
	for _, v := range at {
		if _, ok := read[v]; !ok {
			read[v] = provenanceRead{unread: readmodel.ProvenanceFailed}
		}
	}
	doc := *p.doc
	nd := *n
	nd.provenance = read
	doc.npm = &nd
	p.doc = &doc
	p.provenance = rows
	return p, true, true
}

// storedProvenance is what earlier checks read of the provenance of
// pkg's versions whose manifests were kept, for a result evaluated
// without a check: a version none is stored of is said not read.
func (w *writer) storedProvenance(ctx context.Context, registry string, pkg *npm.Package) (map[string]provenanceRead, error) {
	if pkg.Repository == "" {
		return nil, nil
	}
	var versions []string
	for v, ver := range pkg.Versions {
		if ver.Kept && ver.Dist.Attestations != nil {
			versions = append(versions, v)
		}
	}
	if len(versions) == 0 {
		return nil, nil
	}
	rows, err := w.store.NpmProvenanceOf(ctx, registry, pkg.Name, versions)
	if err != nil {
		return nil, err
	}
	out := make(map[string]provenanceRead, len(rows))
	for v, repo := range rows {
		out[v] = provenanceRead{repository: repo}
	}
	return out, nil
}

// provenanceSignal is the provenance_repository signal of offered (ok),
// or why its provenance's repository was not compared (unread, "" when
// offered was published without provenance).
func provenanceSignal(n *npmDoc, offered string) (readmodel.SignalArgs, bool, readmodel.ProvenanceUnreadReason) {
	a := n.pkg.Versions[offered].Dist.Attestations
	switch {
	case a == nil:
		return readmodel.SignalArgs{}, false, ""
	case a.URL == "": // provenance said, its bundle's address not: none can be read
		return readmodel.SignalArgs{}, false, readmodel.ProvenanceFailed
	case n.pkg.Repository == "":
		return readmodel.SignalArgs{}, false, readmodel.ProvenanceNoPackageRepository
	}
	r, ok := n.provenance[offered]
	switch {
	case !ok:
		return readmodel.SignalArgs{}, false, readmodel.ProvenanceNotChecked
	case r.unread != "":
		return readmodel.SignalArgs{}, false, r.unread
	case r.repository == "":
		return readmodel.SignalArgs{}, false, readmodel.ProvenanceNoRepository
	case npm.SameRepository(r.repository, n.pkg.Repository):
		return readmodel.SignalArgs{}, false, ""
	}
	return readmodel.SignalArgs{Repository: r.repository, PackageRepository: n.pkg.Repository}, true, ""
}
