package updatecheck

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// The one evaluation path. Whatever asks for results — a fetched document,
// a 304, a failed fetch that keeps a stored document, a manifest sync — ends
// in evaluate and writeResults:
//
//   - evaluate derives a component's result from the document, its installed
//     version and the installed core, and records those inputs on the result;
//   - writeResults writes it through a guarded statement that refuses a
//     result whose inputs are no longer the current ones;
//   - when a fenced write finds results refused, or components of the source
//     it has no result for, it reads the inputs again inside its transaction
//     and evaluates those components once more. Every writer of inputs (the
//     manifest sync) holds the lease's lock, as the fenced write does, so
//     the inputs it reads cannot change before it commits.
//
// Dismissals are not inputs: a result lists every advisory that affects the
// installed version and the read model leaves out dismissed ones when read.

// docInput is one trusted document, parsed once, ready to evaluate
// components against.
type docInput struct {
	url  string
	doc  *updatedoc.Document
	hash []byte // sha256 of the exact body, as sources.document_hash
	key  string // the pinned key the body verified under; "" unsigned
}

func newDocInput(url string, body []byte, doc *updatedoc.Document, key string) *docInput {
	h := sha256.Sum256(body)
	return &docInput{url: url, doc: doc, hash: h[:], key: key}
}

// evaluate computes the results of the components in inputs from d.
func evaluate(d *docInput, inputs []store.ComponentInput, epoch int64) []store.Result {
	out := make([]store.Result, 0, len(inputs))
	for _, in := range inputs {
		out = append(out, evaluateOne(d, in, epoch))
	}
	return out
}

func evaluateOne(d *docInput, in store.ComponentInput, epoch int64) store.Result {
	r := store.Result{
		Code: in.Code, SourceURL: d.url, InstalledVersion: in.InstalledVersion, CoreVersion: in.CoreVersion,
		DocumentHash: d.hash, VerifiedKey: d.key, Epoch: epoch,
		Advisories: []byte("[]"), Evaluation: []byte("{}"),
	}
	if in.Code == updatedoc.CoreCode {
		r.CoreVersion = in.InstalledVersion
	}
	ev, err := updatedoc.Evaluate(d.doc, in.Code, in.InstalledVersion, in.CoreVersion)
	if err != nil {
		r.EvalError = err.Error()
		return r
	}
	if ev.Missing {
		r.EvalError = fmt.Sprintf("the update document has no package %q", in.Code)
	}
	r.UpdateAvailable, r.Security, r.NeedsNewerCore = ev.UpdateAvailable, ev.Security, ev.NeedsNewerCore
	if ev.Latest != nil {
		r.LatestVersion, r.ReleaseURL = ev.Latest.Version, ev.Latest.URL
	}
	if ev.Update != nil {
		r.UpdateVersion, r.ReleaseURL = ev.Update.Version, ev.Update.URL
	}
	if ev.BlockedUpdate != nil {
		r.RequiredCore = ev.BlockedUpdate.RequiresCore
	}
	// Marshalling plain structs of strings, bools and times cannot fail.
	r.Advisories, _ = json.Marshal(ev.Advisories)
	r.Evaluation, _ = json.Marshal(ev)
	return r
}

// writeResults writes results evaluated from d, then makes sure that every
// component using d's source now has a result from the current inputs:
// using is how many components use the source, as the transaction's source
// write reported it.
func writeResults(ctx context.Context, tx *store.Tx, d *docInput, results []store.Result, using int, epoch int64) error {
	written, err := tx.ResultWrite(ctx, results)
	if err != nil {
		return err
	}
	if len(written) == len(results) && len(written) == using {
		return nil
	}
	// Some inputs changed since the evaluation (a sync, a core upgrade), or a
	// component joined the source: evaluate again from what holds now.
	inputs, err := tx.ComponentInputsForSource(ctx, d.url)
	if err != nil {
		return err
	}
	inputs = slices.DeleteFunc(inputs, func(in store.ComponentInput) bool { return slices.Contains(written, in.Code) })
	_, err = tx.ResultWrite(ctx, evaluate(d, inputs, epoch))
	return err
}

// errUntrusted: the stored document may not be used under the pinned key.
var errUntrusted = errors.New("the stored document is not signed with the pinned key")

// storedDocument returns the stored document of src as a docInput, if it
// may be trusted for components pinned to key: a pinned key needs a stored
// document that was accepted under that same key and whose signature
// verifies under it now.
func storedDocument(src store.Source, key string) (*docInput, error) {
	if src.Document == nil {
		return nil, errors.New("no document is stored")
	}
	if key != "" {
		if src.SequenceKey != key || src.SignatureState != "verified" {
			return nil, errUntrusted
		}
		pub, err := updatedoc.ParsePublicKey(key)
		if err != nil {
			return nil, fmt.Errorf("pinned key: %w", err)
		}
		if err := updatedoc.Verify(src.Document, src.Signature, pub); err != nil {
			return nil, fmt.Errorf("%w: %w", errUntrusted, err)
		}
	}
	doc, err := updatedoc.Parse(src.Document)
	if err != nil {
		return nil, fmt.Errorf("stored document: %w", err)
	}
	return newDocInput(src.URL, src.Document, doc, key), nil
}
