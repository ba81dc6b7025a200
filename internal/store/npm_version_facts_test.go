package store_test

import (
	"context"
	"testing"

	"github.com/upcheck/upcheck/internal/store"
)

// A version's provenance, once read, keeps its first row (its
// attestations do not change); a burst across a scope keeps the most any
// check saw.
func TestNpmVersionFactsAreKept(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	const reg = "http://127.0.0.1:1/"
	write := func(fn func(tx *store.Tx) error) {
		t.Helper()
		if err := b.st.WithTx(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	write(func(tx *store.Tx) error {
		return tx.NpmProvenanceSave(ctx, []store.NpmProvenance{{Registry: reg, Name: "@acme/a", Version: "1.0.1", Repository: "https://git.example.test/acme/a"},
			{Registry: reg, Name: "@acme/a", Version: "1.0.2"}}, 1)
	})
	write(func(tx *store.Tx) error {
		return tx.NpmProvenanceSave(ctx, []store.NpmProvenance{{Registry: reg, Name: "@acme/a", Version: "1.0.1", Repository: "https://git.example.test/other/a"}}, 2)
	})
	got, err := b.st.NpmProvenanceOf(ctx, reg, "@acme/a", []string{"1.0.1", "1.0.2", "1.0.3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["1.0.1"] != "https://git.example.test/acme/a" || got["1.0.2"] != "" {
		t.Errorf("provenance read back %v", got)
	}
	if other, err := b.st.NpmProvenanceOf(ctx, "http://127.0.0.1:2/", "@acme/a", []string{"1.0.1"}); err != nil || len(other) != 0 {
		t.Errorf("another registry's: %v %v", other, err)
	}

	burst := func(count int, epoch int64) {
		write(func(tx *store.Tx) error {
			return tx.NpmScopeBurstSave(ctx, []store.NpmScopeBurst{{Registry: reg, Name: "@acme/a", Version: "1.0.2", Scope: "@acme", Count: count}}, epoch)
		})
	}
	burst(8, 1)
	burst(6, 2)
	all, err := b.st.NpmScopeBursts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := all[reg]["@acme/a"]["1.0.2"]; got.Count != 8 || got.Scope != "@acme" {
		t.Errorf("after 8 then 6: %+v, want the most seen (8)", got)
	}
	burst(9, 3)
	if all, _ := b.st.NpmScopeBursts(ctx); all[reg]["@acme/a"]["1.0.2"].Count != 9 {
		t.Errorf("after 9: %+v", all[reg]["@acme/a"]["1.0.2"])
	}
}
