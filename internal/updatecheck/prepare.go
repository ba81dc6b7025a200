package updatecheck

import (
	"fmt"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// pending is one source's outcome, prepared outside any transaction and
// written by write.
type pending struct {
	job job
	verdict
	etag         string // the validators the publisher sent
	lastModified string
	results      []store.Result // evaluated from verdict.doc
	// room is what it holds of the writers' queue's room (queueRoom),
	// given back once it is written.
	room int64
	// trust, when set, is the source's trust to store with its row (a key
	// statement looked at or followed, a stored set reset); trustChange,
	// when set, is the change of its trusted keys for the audit log.
	trust       *store.SourceTrust
	trustChange *trustChange
	// registryChange, for an npm source, is its registry's keys to pin
	// with it (first sight, or a change).
	registryChange *registryChange
	// trustState and verifiedBy, for an npm source that keeps its stored
	// package, are its trust as judged now (its registry's keys may have
	// changed); "" keeps the stored.
	trustState, verifiedBy string
	// dependencies, for an npm source, are what the check read of the
	// documents of dependencies its offers add (readDependencies), to
	// store with its row.
	dependencies []store.NpmDependency
	// provenance, for an npm source, are the attestation bundles the
	// check read of the versions it offers (readProvenance), to store
	// with its row.
	provenance []store.NpmProvenance
}

// unchanged is p's success that keeps the stored document.
func (p pending) unchanged(epoch int64) store.Unchanged {
	return store.Unchanged{URL: p.job.url, ETag: p.etag, LastModified: p.lastModified, Epoch: epoch,
		SignatureState: p.trustState, VerifiedBy: p.verifiedBy}
}

// evaluated evaluates p's components from the document its verdict keeps.
// Nothing is written from a document that could not be evaluated: p then
// records the failure instead, and no trust change.
func evaluated(p pending, epoch int64) pending {
	if p.doc != nil {
		results, err := evaluate(p.doc, p.job.intel, p.job.inputs(), epoch)
		if err != nil {
			p.verdict = verdict{failure: failure{kind: readmodel.ErrorOther, detail: fmt.Sprintf("evaluate: %v", err)}}
			p.trust, p.trustChange = nil, nil
			return p
		}
		p.results = results
	}
	return p
}
