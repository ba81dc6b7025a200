package updatecheck

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// publish serves body at path, signed by privs (a signature set in the
// header; none when privs is empty).
func publish(p *publisher.Publisher, path string, body []byte, privs ...updatedoc.PrivateKey) {
	p.SetSigned(path, body, strings.ReplaceAll(strings.TrimSpace(updatedoc.SignSet(body, privs)), "\n", ", "))
}

// publishStatement serves a key statement for the document at path (and
// its .sig), endorsing keys with threshold, signed by privs.
func publishStatement(t *testing.T, p *publisher.Publisher, path string, version int64, keys []updatedoc.PublicKey, threshold int, privs ...updatedoc.PrivateKey) {
	t.Helper()
	texts := make([]string, len(keys))
	for i, k := range keys {
		texts[i] = k.String()
	}
	set, err := updatedoc.NewKeySet(texts, threshold)
	if err != nil {
		t.Fatal(err)
	}
	body := updatedoc.FormatKeyStatement("acme", version, set)
	p.Set(path+".keys", body)
	p.Set(path+".keys.sig", []byte(updatedoc.SignSet(body, privs)))
}

// trustRow is the stored trust of a source.
type trustRow struct {
	Pin, Keys string
	Version   int64
}

func (b *bundle) trust(url string) trustRow {
	b.t.Helper()
	var r trustRow
	b.db.QueryRow(b.t, `SELECT pin, coalesce(keys, ''), version FROM source_trust WHERE url = $1`, url).Scan(&r.Pin, &r.Keys, &r.Version)
	return r
}

// trustAudit is the audit log's trust entries, oldest first.
func (b *bundle) trustAudit() []trustChange {
	b.t.Helper()
	var out []trustChange
	for _, e := range b.auditEvents() {
		if e.Action != string(auditTrust) || e.Kind != "trust" {
			continue
		}
		var c trustChange
		if err := json.Unmarshal(e.Detail, &c); err != nil {
			b.t.Fatal(err)
		}
		out = append([]trustChange{c}, out...) // the page lists newest first
	}
	return out
}

func core(url string, keys ...updatedoc.PublicKey) manifest.Component {
	c := manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: url}
	if len(keys) == 1 {
		c.Key = keys[0].String()
		return c
	}
	for _, k := range keys {
		c.Keys = append(c.Keys, k.String())
	}
	return c
}

// A rotation endorsed by the old key is followed with no operator action
// and no gap in results, keeps the rollback sequence, and is in the audit
// log.
func TestEndorsedRotationIsFollowed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	oldPub, oldPriv := generateKey(t)
	newPub, newPriv := generateKey(t)
	url := p.URL + "/core.json"
	publish(p, "/core.json", doc(10, map[string]string{"core": pkgCore}), oldPriv)
	b.sync(core(url, oldPub))
	if res := b.run(lease.Operator); res.Fetched != 1 || res.Failed != 0 {
		t.Fatalf("first run = %s", resultJSON(res))
	}

	// The publisher rotates: a statement signed by the old key names the
	// new one, and the next document is signed by the new key only.
	publishStatement(t, p, "/core.json", 1, []updatedoc.PublicKey{newPub}, 1, oldPriv)
	publish(p, "/core.json", doc(11, map[string]string{"core": pkgUpToDate}), newPriv)
	res := b.run(lease.Operator)
	if res.Fetched != 1 || res.Failed != 0 {
		t.Fatalf("rotating run = %s", resultJSON(res))
	}
	if s := b.source(url); s.Sequence != 11 || s.LastError != "" || s.SignatureState != "verified" {
		t.Fatalf("source after the rotation = %+v", s)
	}
	if r := b.results()["core"]; !r.Evaluated || r.Epoch != res.Epoch || r.Latest != "1.0.0" {
		t.Fatalf("core after the rotation = %+v, want evaluated from the new document in run %d", r, res.Epoch)
	}
	if tr := b.trust(url); tr.Pin != oldPub.String() || tr.Keys != newPub.String() || tr.Version != 1 {
		t.Fatalf("stored trust = %+v", tr)
	}
	audit := b.trustAudit()
	if len(audit) != 1 || !slices.Equal(audit[0].OldKeys, []string{updatedoc.Fingerprint(oldPub)}) ||
		!slices.Equal(audit[0].NewKeys, []string{updatedoc.Fingerprint(newPub)}) || audit[0].OldVersion != 0 || audit[0].NewVersion != 1 {
		t.Fatalf("audit = %+v", audit)
	}

	// The rollback sequence survived the rotation: a document under the
	// new key with a lower sequence is a rollback.
	publish(p, "/core.json", doc(9, map[string]string{"core": pkgCore}), newPriv)
	if res := b.run(lease.Operator); res.Failed != 1 {
		t.Fatalf("rollback run = %s", resultJSON(res))
	}
	if s := b.source(url); s.LastErrorKind != string(readmodel.ErrorRollback) || !reflect.DeepEqual(s.LastErrorArgs, readmodel.RollbackArgs(9, 11)) {
		t.Fatalf("source = %+v, want a rollback 9 < 11", s)
	}
	if r := b.results()["core"]; !r.Evaluated || r.Latest != "1.0.0" {
		t.Fatalf("core after the rollback = %+v, want the last good document", r)
	}
}

// A statement signed only by the new key, or not newer than the last one
// accepted, is refused, and the source says why; the last good document
// keeps answering.
func TestKeyStatementRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	aPub, aPriv := generateKey(t)
	bPub, bPriv := generateKey(t)
	cPub, cPriv := generateKey(t)
	url := p.URL + "/core.json"
	publish(p, "/core.json", doc(10, map[string]string{"core": pkgCore}), aPriv)
	b.sync(core(url, aPub))
	b.run(lease.Operator)

	publishStatement(t, p, "/core.json", 1, []updatedoc.PublicKey{bPub}, 1, bPriv) // self-signed
	publish(p, "/core.json", doc(11, map[string]string{"core": pkgUpToDate}), bPriv)
	if res := b.run(lease.Operator); res.Failed != 1 {
		t.Fatalf("run = %s", resultJSON(res))
	}
	if s := b.source(url); s.LastErrorKind != string(readmodel.ErrorKeyStatement) || s.LastErrorArgs.Statement != readmodel.StatementUnsigned || s.Sequence != 10 {
		t.Fatalf("source = %+v, want the statement refused for its signature", s)
	}
	if r := b.results()["core"]; !r.Evaluated || r.Latest != "1.10.0" {
		t.Fatalf("core = %+v, want the last good document", r)
	}
	if tr := b.trust(url); tr.Keys != "" || tr.Version != 0 {
		t.Fatalf("trust = %+v, want nothing endorsed", tr)
	}

	// Endorsed by A: followed. Then a statement of the same version, signed
	// by B, moving to C: a replay as far as the site knows, refused.
	publishStatement(t, p, "/core.json", 1, []updatedoc.PublicKey{bPub}, 1, aPriv)
	if res := b.run(lease.Operator); res.Failed != 0 || res.Fetched != 1 {
		t.Fatalf("endorsed run = %s", resultJSON(res))
	}
	publishStatement(t, p, "/core.json", 1, []updatedoc.PublicKey{cPub}, 1, bPriv)
	publish(p, "/core.json", doc(12, map[string]string{"core": pkgCore}), cPriv)
	if res := b.run(lease.Operator); res.Failed != 1 {
		t.Fatalf("run = %s", resultJSON(res))
	}
	s := b.source(url)
	if s.LastErrorKind != string(readmodel.ErrorKeyStatement) || !reflect.DeepEqual(s.LastErrorArgs, readmodel.KeyStatementNotNewerArgs(1, 1)) {
		t.Fatalf("source = %+v, want the statement refused for its version", s)
	}
	if !strings.Contains(readmodel.ProblemSentence(s.LastErrorKind, s.LastErrorArgs), "version 1 is not newer than version 1") {
		t.Fatalf("sentence = %q", readmodel.ProblemSentence(s.LastErrorKind, s.LastErrorArgs))
	}
	if n := len(b.trustAudit()); n != 1 {
		t.Fatalf("%d trust changes in the audit log, want the one endorsed", n)
	}
}

// With 2 of 3 keys pinned, one signature is not enough, for a document or
// for a statement.
func TestThresholdTwoOfThree(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	aPub, aPriv := generateKey(t)
	bPub, bPriv := generateKey(t)
	cPub, _ := generateKey(t)
	dPub, dPriv := generateKey(t)
	url := p.URL + "/core.json"
	pin := core(url, aPub, bPub, cPub)
	pin.Threshold = 2
	b.sync(pin)

	publish(p, "/core.json", doc(10, map[string]string{"core": pkgCore}), aPriv)
	if res := b.run(lease.Operator); res.Failed != 1 {
		t.Fatalf("one signature of 2 needed = %s", resultJSON(res))
	}
	if s := b.source(url); s.LastErrorKind != string(readmodel.ErrorBadSignature) {
		t.Fatalf("source = %+v", s)
	}
	publish(p, "/core.json", doc(10, map[string]string{"core": pkgCore}), aPriv, bPriv)
	if res := b.run(lease.Operator); res.Failed != 0 || res.Fetched != 1 {
		t.Fatalf("two signatures = %s", resultJSON(res))
	}

	publishStatement(t, p, "/core.json", 1, []updatedoc.PublicKey{dPub}, 1, aPriv)
	publish(p, "/core.json", doc(11, map[string]string{"core": pkgCore}), dPriv)
	if res := b.run(lease.Operator); res.Failed != 1 {
		t.Fatalf("statement with one signature = %s", resultJSON(res))
	}
	if s := b.source(url); s.LastErrorKind != string(readmodel.ErrorKeyStatement) || s.LastErrorArgs.Statement != readmodel.StatementUnsigned {
		t.Fatalf("source = %+v", s)
	}
	publishStatement(t, p, "/core.json", 1, []updatedoc.PublicKey{dPub}, 1, aPriv, bPriv)
	if res := b.run(lease.Operator); res.Failed != 0 || res.Fetched != 1 {
		t.Fatalf("statement with two signatures = %s", resultJSON(res))
	}
}

// Changing the pin in the manifest resets the stored set: the pin is the
// root of trust.
func TestPinChangeResetsTrustedSet(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	oldPub, oldPriv := generateKey(t)
	newPub, newPriv := generateKey(t)
	url := p.URL + "/core.json"
	publish(p, "/core.json", doc(10, map[string]string{"core": pkgCore}), oldPriv)
	b.sync(core(url, oldPub))
	b.run(lease.Operator)
	publishStatement(t, p, "/core.json", 1, []updatedoc.PublicKey{newPub}, 1, oldPriv)
	publish(p, "/core.json", doc(11, map[string]string{"core": pkgCore}), newPriv)
	b.run(lease.Operator)
	if tr := b.trust(url); tr.Keys != newPub.String() {
		t.Fatalf("trust = %+v", tr)
	}

	b.sync(core(url, newPub)) // the operator pins the new key itself
	if res := b.run(lease.Operator); res.Failed != 0 || res.Fetched != 1 {
		t.Fatalf("run = %s", resultJSON(res))
	}
	if tr := b.trust(url); tr.Pin != newPub.String() || tr.Keys != "" || tr.Version != 0 {
		t.Fatalf("trust after the pin change = %+v, want the pin's own keys, no statement", tr)
	}
	audit := b.trustAudit()
	if len(audit) != 2 || audit[1].Reason != "the manifest pins other keys" || audit[1].NewVersion != 0 ||
		!slices.Equal(audit[1].NewKeys, []string{updatedoc.Fingerprint(newPub)}) {
		t.Fatalf("audit = %+v", audit)
	}
}

// While documents verify, the statement is looked at once a day, not on
// every check.
func TestStatementLookedAtDaily(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	pub, priv := generateKey(t)
	publish(p, "/core.json", doc(10, map[string]string{"core": pkgCore}), priv)
	b.sync(core(p.URL+"/core.json", pub))
	for range 2 {
		if res := b.run(lease.Operator); res.Failed != 0 {
			t.Fatalf("run = %s", resultJSON(res))
		}
	}
	if n := p.Requests("/core.json.keys"); n != 1 {
		t.Fatalf("statement fetched %d times, want once", n)
	}
	b.db.MustExec(t, `UPDATE source_trust SET checked_at = checked_at - interval '25 hours'`)
	b.run(lease.Operator)
	if n := p.Requests("/core.json.keys"); n != 2 {
		t.Fatalf("statement fetched %d times after a day, want twice", n)
	}
}

// auditEvents is the audit log as its page reads it (every kind).
func (b *bundle) auditEvents() []readmodel.AuditRow {
	b.t.Helper()
	events, err := b.store.AuditEvents(context.Background(), "", 0, 0)
	if err != nil {
		b.t.Fatal(err)
	}
	return events
}

// untrusted_sources counts a source whose document expires within 7 days,
// or whose last fetch was refused for its signature, its key statement or
// a rollback; the Sources page reads the same flag.
func TestUntrustedSources(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	pub, priv := generateKey(t)
	otherPub, otherPriv := generateKey(t)
	soon := time.Now().Add(72 * time.Hour).UTC().Format(time.RFC3339)
	publish(p, "/core.json", doc(10, map[string]string{"core": pkgCore}), priv)
	p.Set("/blog.json", []byte(`{"format": 1, "publisher": "acme", "sequence": 1, "expires": "`+soon+`", "packages": {"blog": `+pkgBlog+`}}`))
	b.sync(core(p.URL+"/core.json", pub), manifest.Component{Code: "blog", Name: "Blog", Version: "2.3.0", Source: p.URL + "/blog.json"})
	b.run(lease.Operator)
	untrusted := func() (int, map[string]bool) {
		t.Helper()
		sum, err := b.reads.Summary(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		health, err := b.store.SourceHealth(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		flags := map[string]bool{}
		for _, h := range health {
			flags[strings.TrimPrefix(h.URL, p.URL)] = h.Untrusted
		}
		return sum.UntrustedSources, flags
	}
	if n, flags := untrusted(); n != 1 || !flags["/blog.json"] || flags["/core.json"] {
		t.Fatalf("untrusted = %d %v, want the document expiring in 3 days", n, flags)
	}
	publishStatement(t, p, "/core.json", 1, []updatedoc.PublicKey{otherPub}, 1, otherPriv)
	publish(p, "/core.json", doc(11, map[string]string{"core": pkgCore}), otherPriv)
	b.run(lease.Operator)
	if n, flags := untrusted(); n != 2 || !flags["/core.json"] {
		t.Fatalf("untrusted = %d %v, want the refused key statement too", n, flags)
	}
}

// A statement published ahead of the documents signed by its keys waits:
// the document signed by the keys trusted now stays trusted, and the
// rotation is followed when a document signed by the new keys comes.
func TestStatementAheadOfDocumentsWaits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	oldPub, oldPriv := generateKey(t)
	newPub, newPriv := generateKey(t)
	url := p.URL + "/core.json"
	publish(p, "/core.json", doc(10, map[string]string{"core": pkgCore}), oldPriv)
	publishStatement(t, p, "/core.json", 1, []updatedoc.PublicKey{newPub}, 1, oldPriv)
	b.sync(core(url, oldPub))
	if res := b.run(lease.Operator); res.Fetched != 1 || res.Failed != 0 || p.Requests("/core.json.keys") != 1 {
		t.Fatalf("first run = %s, statement fetched %d times", resultJSON(res), p.Requests("/core.json.keys"))
	}
	if tr := b.trust(url); tr.Keys != "" || tr.Version != 0 {
		t.Fatalf("trust = %+v, want the statement waiting", tr)
	}
	publish(p, "/core.json", doc(11, map[string]string{"core": pkgUpToDate}), newPriv)
	if res := b.run(lease.Operator); res.Fetched != 1 || res.Failed != 0 {
		t.Fatalf("run with the new key = %s", resultJSON(res))
	}
	if tr := b.trust(url); tr.Keys != newPub.String() || tr.Version != 1 {
		t.Fatalf("trust = %+v, want the rotation followed", tr)
	}
}
