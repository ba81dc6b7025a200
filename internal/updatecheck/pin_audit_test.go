package updatecheck

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// pinAudit is the audit log's pin changes, oldest first.
func (b *bundle) pinAudit() []pinChange {
	b.t.Helper()
	var out []pinChange
	for _, e := range b.auditEvents() {
		if e.Action != string(auditPin) {
			continue
		}
		if e.Kind != "trust" || e.Actor != "manifest sync" {
			b.t.Errorf("a pin change listed as kind %q by %q", e.Kind, e.Actor)
		}
		if strings.Contains(string(e.Detail), "ed25519:") {
			b.t.Errorf("the audit log holds a whole key: %s", e.Detail)
		}
		var c pinChange
		if err := json.Unmarshal(e.Detail, &c); err != nil {
			b.t.Fatal(err)
		}
		out = append([]pinChange{c}, out...) // the page lists newest first
	}
	return out
}

// Every manifest sync that changes the keys pinned for a source, or their
// threshold, leaves one audit row per source saying from which
// fingerprints to which, and for which components; a sync that changes no
// pin, and a component added with its pin, leave none.
func TestSyncAuditsPinChanges(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a, _ := generateKey(t)
	k2, _ := generateKey(t)
	k3, _ := generateKey(t)
	url := "https://acme.example/updates.json"
	comp := func(code string, keys []updatedoc.PublicKey, threshold int) manifest.Component {
		c := manifest.Component{Code: code, Name: code, Version: "1.0.0", Source: url}
		if len(keys) == 1 {
			c.Key = keys[0].String()
			return c
		}
		for _, k := range keys {
			c.Keys = append(c.Keys, k.String())
		}
		c.Threshold = threshold
		return c
	}
	fp := func(keys ...updatedoc.PublicKey) []string { // in the key set's order
		texts := make([]string, len(keys))
		for i, k := range keys {
			texts[i] = k.String()
		}
		set, err := updatedoc.NewKeySet(texts, 1)
		if err != nil {
			t.Fatal(err)
		}
		return set.Fingerprints()
	}
	one := []updatedoc.PublicKey{a}
	b.sync(manifest.Component{Code: "core", Name: "Core", Version: "1.0.0"}, comp("blog", nil, 0), comp("forms", nil, 0))
	b.sync(manifest.Component{Code: "core", Name: "Core", Version: "1.1.0"}, comp("blog", nil, 0), comp("forms", nil, 0))
	if got := b.pinAudit(); len(got) != 0 {
		t.Fatalf("syncs that pin nothing: audit %+v", got)
	}

	type want struct {
		reason     string
		oldKeys    []string
		oldThresh  int
		newKeys    []string
		newThresh  int
		components []string
	}
	steps := []struct {
		name  string
		comps []manifest.Component
		want  want
	}{
		{"a key pinned", []manifest.Component{comp("blog", one, 0), comp("forms", one, 0)},
			want{"the manifest pins keys where it pinned none, for blog, forms", []string{}, 0, fp(a), 1, []string{"blog", "forms"}}},
		{"other keys", []manifest.Component{comp("blog", []updatedoc.PublicKey{k2, k3}, 1), comp("forms", []updatedoc.PublicKey{k2, k3}, 1)},
			want{"the manifest pins other keys, for blog, forms", fp(a), 1, fp(k2, k3), 1, []string{"blog", "forms"}}},
		{"a threshold", []manifest.Component{comp("blog", []updatedoc.PublicKey{k2, k3}, 2), comp("forms", []updatedoc.PublicKey{k2, k3}, 2)},
			want{"the manifest requires another number of signatures, for blog, forms", fp(k2, k3), 1, fp(k2, k3), 2, []string{"blog", "forms"}}},
		{"no key", []manifest.Component{comp("blog", nil, 0), comp("forms", nil, 0)},
			want{"the manifest pins no key any more: documents are no longer verified, for blog, forms", fp(k2, k3), 2, []string{}, 0, []string{"blog", "forms"}}},
	}
	for i, s := range steps {
		b.sync(append([]manifest.Component{{Code: "core", Name: "Core", Version: "1.1.0"}}, s.comps...)...)
		got := b.pinAudit()
		if len(got) != i+1 {
			t.Fatalf("%s: %d pin changes in the audit log, want %d: %+v", s.name, len(got), i+1, got)
		}
		c, w := got[i], s.want
		if c.Source != url || c.Reason != w.reason || !slices.Equal(c.OldKeys, w.oldKeys) || c.OldThreshold != w.oldThresh ||
			!slices.Equal(c.NewKeys, w.newKeys) || c.NewThreshold != w.newThresh || !slices.Equal(c.Components, w.components) || c.By != "manifest sync" {
			t.Errorf("%s: audit %+v, want %+v", s.name, c, w)
		}
	}

	// A component added with a pin on a source nobody used, and a sync
	// that changes nothing, change no pin of a source.
	last := append([]manifest.Component{{Code: "core", Name: "Core", Version: "1.1.0"}}, steps[len(steps)-1].comps...)
	shop := comp("shop", one, 0)
	shop.Source = "https://shop.example/updates.json"
	b.sync(append(last, shop)...)
	b.sync(append(last, shop)...)
	if got := b.pinAudit(); len(got) != len(steps) {
		t.Fatalf("after syncs that change no pin: %d pin changes, want %d: %+v", len(got), len(steps), got[len(steps):])
	}
}

// A source whose components take more than one sync transaction gets one
// audit row for its pin change, naming every component, not one per
// transaction naming some.
func TestPinChangeAcrossBatchesIsOneRow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a, _ := generateKey(t)
	url := "https://acme.example/updates.json"
	comps := func(key string) []manifest.Component {
		out := []manifest.Component{{Code: "core", Name: "Core", Version: "1.0.0"}}
		for i := range syncBatch + 10 {
			out = append(out, manifest.Component{Code: fmt.Sprintf("p%04d", i), Name: "P", Version: "1.0.0", Source: url, Key: key})
		}
		return out
	}
	b.sync(comps("")...)
	b.sync(comps(a.String())...)
	got := b.pinAudit()
	if len(got) != 1 || len(got[0].Components) != syncBatch+10 {
		counts := make([]int, len(got))
		for i, c := range got {
			counts[i] = len(c.Components)
		}
		t.Fatalf("pin change over two transactions: %d audit rows naming %v components, want 1 naming %d", len(got), counts, syncBatch+10)
	}
}
