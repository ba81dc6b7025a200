package updatecheck

import (
	"strings"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// verdict is what the acceptance policy decided about one publisher answer.
type verdict struct {
	// failure, when set, is recorded against the source; the stored
	// document stays.
	failure failure
	// notModified: a 304 that the stored document may answer for.
	notModified bool
	// document, when newDocument, replaces the stored one.
	newDocument bool
	document    store.SourceDocument
	// doc is what the components are evaluated from: the new document, or
	// the stored one while it is trusted under the key pinned now (also
	// after a failure); nil evaluates nothing.
	doc *docInput
}

// answer is what the publisher said: a failure, or a response with its
// signature (the Upcheck-Signature header, or the .sig file fetched
// beforehand).
type answer struct {
	failure   failure // the fetch (or the .sig's) failed: why
	resp      fetch.Response
	signature string
}

// accept is the acceptance policy of a fetched source, with no I/O and no
// clock, so that it can be read and tested as a table: given what is
// stored for the source (j) and the publisher's answer, decide what is
// kept.
//
//   - A 304 vouches for the stored bytes only if they were accepted under
//     the pin now in the manifest and verify under the keys trusted now:
//     after a pin change the old document is not trusted.
//   - A new document must be signed by the threshold of the trusted keys
//     (j.trust: the pin's keys, or those a key statement endorsed under
//     it) when a pin is set, parse, and carry a sequence no lower than the
//     highest ever accepted under the pin (rollback protection survives
//     pin changes and endorsed rotations alike).
//   - The same sequence under the same key is the same publication: the
//     stored document stays and only the validators and the success move.
//   - Whatever fails, the stored document keeps answering for the
//     components while it is trusted, and the failure is recorded.
func accept(j job, a answer, epoch int64) verdict {
	fail := func(f failure) verdict {
		v := verdict{failure: f}
		if d, err := storedDocument(j.stored, j.key, j.trust.set); err == nil {
			v.doc = d
		}
		return v
	}
	resp, signature := a.resp, a.signature
	switch {
	case a.failure.failed():
		return fail(a.failure)
	case resp.NotModified:
		d, err := storedDocument(j.stored, j.key, j.trust.set)
		if err != nil {
			return fail(notModifiedFailure(err))
		}
		return verdict{notModified: true, doc: d}
	}

	body, state, verifiedBy := resp.Body, string(readmodel.TrustUnsigned), ""
	if j.key != "" {
		if j.trust.err != nil {
			return fail(pinnedKeyFailure(j.trust.err))
		}
		if strings.TrimSpace(signature) == "" {
			return fail(unsignedFailure())
		}
		by, err := updatedoc.VerifySet(body, signature, j.trust.set)
		if err != nil {
			return fail(signatureFailure(err))
		}
		state, verifiedBy = string(readmodel.TrustVerified), fingerprints(by)
	}
	doc, err := updatedoc.Parse(body)
	if err != nil {
		return fail(documentFailure(err))
	}
	highest, seen := j.sequences[j.key]
	if err := updatedoc.CheckSequence(highest, doc.Sequence, seen); err != nil {
		return fail(rollbackFailure(err, doc.Sequence, highest))
	}
	if j.stored.Sequence != nil && *j.stored.Sequence == doc.Sequence && j.stored.SequenceKey == j.key {
		if d, err := storedDocument(j.stored, j.key, j.trust.set); err == nil {
			return verdict{doc: d}
		}
	}
	return verdict{
		newDocument: true,
		document: store.SourceDocument{
			URL: j.url, Document: body, Signature: signature, Sequence: doc.Sequence, SequenceKey: j.key,
			ETag: resp.ETag, LastModified: resp.LastModified, ExpiresAt: expiry(doc), SignatureState: state, Epoch: epoch,
			VerifiedBy: verifiedBy,
		},
		doc: newDocInput(j.url, body, doc, j.key),
	}
}

// fingerprints is the short forms of keys, space separated.
func fingerprints(keys []updatedoc.PublicKey) string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = updatedoc.Fingerprint(k)
	}
	return strings.Join(out, " ")
}
