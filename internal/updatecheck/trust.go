package updatecheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// statementInterval is how often a source's key statement is looked at
// while its documents verify; a document that does not verify under the
// trusted keys looks at once.
const statementInterval = 24 * time.Hour

// trust is a source's trust when the check began: the keys trusted under
// the manifest's pin. The pin is the root of trust: a stored set that a key
// statement endorsed applies only while the pin it was endorsed under is
// the pin now; otherwise the pin's own keys are trusted.
type trust struct {
	stored  store.SourceTrust // as stored; URL "" when nothing is
	set     updatedoc.KeySet  // the keys trusted now; zero when nothing is pinned
	version int64             // the last statement accepted under the pin, 0 for none
	err     error             // the pin is not a valid key set
}

func trustOf(pin string, st store.SourceTrust) trust {
	t := trust{stored: st}
	if pin == "" {
		return t
	}
	if st.URL != "" && st.Pin == pin {
		t.version = st.Version
		if st.Keys != "" {
			if set, err := updatedoc.ParseKeySet(st.Keys); err == nil {
				t.set = set
				return t
			}
		}
	}
	t.set, t.err = updatedoc.ParseKeySet(pin)
	return t
}

// reset reports whether the stored row holds a set that a statement
// endorsed under another pin than pin: the manifest's pin changed, and the
// pin's own keys are trusted again.
func (t trust) reset(pin string) bool {
	return t.stored.URL != "" && t.stored.Pin != pin && t.stored.Keys != ""
}

// statementDue: the statement was never looked at under this pin, or not
// for statementInterval.
func (t trust) statementDue(pin string, now time.Time) bool {
	st := t.stored
	return st.URL == "" || st.Pin != pin || st.CheckedAt == nil || now.Sub(*st.CheckedAt) >= statementInterval
}

// trustChange is a change of a source's trusted keys, for the audit log
// (action "source.trust").
type trustChange struct {
	Source       string   `json:"source"`
	Reason       string   `json:"reason"`
	OldKeys      []string `json:"old_keys"`
	OldThreshold int      `json:"old_threshold"`
	OldVersion   int64    `json:"old_version"`
	NewKeys      []string `json:"new_keys"`
	NewThreshold int      `json:"new_threshold"`
	NewVersion   int64    `json:"new_version"`
}

// auditTrust is the audit action of a trust change.
const auditTrust = readmodel.AuditSourceTrust

func newTrustChange(url, reason string, old updatedoc.KeySet, oldVersion int64, set updatedoc.KeySet, version int64) *trustChange {
	return &trustChange{Source: url, Reason: reason,
		OldKeys: old.Fingerprints(), OldThreshold: old.Threshold(), OldVersion: oldVersion,
		NewKeys: set.Fingerprints(), NewThreshold: set.Threshold(), NewVersion: version}
}

// followTrust looks at the source's key statement when it is due or when
// the document does not verify under the keys trusted now, and decides
// it: a statement signed by the threshold of the keys trusted now, with a
// higher version than the last accepted, changes the trusted keys, and the
// publisher's answer is judged again under them in the same check (no gap
// in results). While the answer verifies under the keys trusted now but
// not under the statement's, the statement waits (a statement published
// ahead of the documents signed by its keys). It returns the verdict, the trust row to write (nil:
// nothing to write) with the change for the audit log, and false when the
// check was cancelled.
func (c *Checker) followTrust(ctx context.Context, j job, a answer, v verdict, epoch int64) (verdict, *store.SourceTrust, *trustChange, bool) {
	if j.key == "" || j.trust.err != nil {
		return v, nil, nil, true
	}
	now := time.Now()
	docRefused := v.failure.kind == readmodel.ErrorBadSignature
	var change *trustChange
	if j.trust.reset(j.key) {
		old, err := updatedoc.ParseKeySet(j.trust.stored.Keys)
		if err == nil {
			change = newTrustChange(j.url, "the manifest pins other keys", old, j.trust.stored.Version, j.trust.set, 0)
		}
	}
	if !docRefused && !j.trust.statementDue(j.key, now) {
		if change == nil {
			return v, nil, nil, true
		}
		return v, &store.SourceTrust{URL: j.url, Pin: j.key, Changed: true, Epoch: epoch}, change, true
	}

	w := &store.SourceTrust{URL: j.url, Pin: j.key, Version: j.trust.version, CheckedAt: &now, Epoch: epoch, Changed: change != nil}
	if !j.trust.set.Equal(mustSet(j.key)) {
		w.Keys = j.trust.set.String()
	}
	body, sigs, err := c.fetcher.FetchKeyStatement(ctx, j.url)
	if fetch.IsCancelled(ctx, err) {
		return v, nil, nil, false
	}
	var refused failure
	se, isStatus := errors.AsType[*fetch.StatusError](err)
	notFound := isStatus && se.Code == http.StatusNotFound
	switch {
	case err != nil && notFound && body == nil:
		// No statement published: nothing to follow.
	case err != nil && !notFound:
		if docRefused {
			v.failure.detail += "; its key statement could not be fetched: " + err.Error()
		} else {
			c.logger.WarnContext(ctx, "key statement could not be fetched", "url", j.url, "error", err)
		}
	default: // a statement, signed or not (no .keys.sig)
		st, err := updatedoc.AcceptStatement(body, sigs, j.trust.set, j.trust.version)
		next := j
		if err == nil {
			next.trust.set, next.trust.version = st.Set, st.Version
		}
		switch nv := accept(next, a, epoch); {
		case err == nil && !docRefused && nv.failure.failed():
			// A statement published ahead of the documents: the answer
			// verifies under the keys trusted now, not yet under the new
			// ones. It is followed once documents are signed by them (or
			// by both), so that no site is left without a trusted document.
			c.logger.InfoContext(ctx, "key statement waits for a document signed by its keys", "url", j.url, "version", st.Version)
		case err == nil:
			change = newTrustChange(j.url, fmt.Sprintf("key statement %d endorsed by the keys trusted before", st.Version),
				j.trust.set, j.trust.version, st.Set, st.Version)
			w.Keys, w.Version, w.Statement, w.StatementSignature, w.Changed = st.Set.String(), st.Version, body, sigs, true
			if st.Set.Equal(mustSet(j.key)) {
				w.Keys = ""
			}
			c.logger.InfoContext(ctx, "trusted keys changed by a key statement", "url", j.url, "version", st.Version,
				"old_keys", change.OldKeys, "new_keys", change.NewKeys)
			v = nv
		case errors.Is(err, updatedoc.ErrStatementNotNewer) && !docRefused:
			// The statement accepted before, still published.
		default:
			refused = statementFailure(err, st, j.trust.version)
			c.logger.WarnContext(ctx, "key statement refused", "url", j.url, "error", err)
		}
	}
	if refused.failed() && docRefused {
		v.failure = refused
	}
	return v, w, change, true
}

// mustSet is the key set of a valid pin (the zero set otherwise).
func mustSet(pin string) updatedoc.KeySet {
	set, _ := updatedoc.ParseKeySet(pin)
	return set
}

// statementFailure is a refused key statement, for a document that does
// not verify under the keys trusted now.
func statementFailure(err error, st *updatedoc.KeyStatement, last int64) failure {
	f := failure{kind: readmodel.ErrorKeyStatement, args: readmodel.FailureArgs{Statement: readmodel.StatementUnsigned}, detail: fmt.Sprintf("the document does not verify under the keys trusted now, and %v", err)}
	switch {
	case errors.Is(err, updatedoc.ErrStatementNotNewer) && st != nil:
		f.args = readmodel.KeyStatementNotNewerArgs(st.Version, last)
	case errors.Is(err, updatedoc.ErrInvalid) && !errors.Is(err, updatedoc.ErrBadSignature) && !errors.Is(err, updatedoc.ErrUnsigned):
		f.args = readmodel.FailureArgs{Statement: readmodel.StatementMalformed}
	}
	return f
}
