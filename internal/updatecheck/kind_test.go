package updatecheck

import (
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// Every kind of source the vocabulary names has its adapter, and the
// address of each is read as that kind: a kind named without an adapter
// would leave kindOf answering nil for its sources.
func TestEveryKindHasAnAdapter(t *testing.T) {
	t.Parallel()
	if len(kinds) != len(readmodel.AllSourceKinds()) {
		t.Errorf("%d adapters for %d kinds of source", len(kinds), len(readmodel.AllSourceKinds()))
	}
	for _, name := range readmodel.AllSourceKinds() {
		if kinds[name] == nil {
			t.Errorf("the kind %q has no adapter in kinds", name)
		}
	}
	if t.Failed() {
		return
	}
	for url, want := range map[string]sourceKind{
		"https://example.test/feed.json": documentKind{},
		"offline:acme":                   offlineKind{},
		"npm:@acme/blog":                 npmKind{},
	} {
		if got := kindOf(url); got != want {
			t.Errorf("kindOf(%q) = %T, want %T", url, got, want)
		}
	}
	if kindOf("offline:acme").fetched() || !kindOf("https://example.test/feed.json").fetched() || !kindOf("npm:left-pad").fetched() {
		t.Error("only offline sources go unfetched")
	}
	if Importable("npm:left-pad") == nil || Importable("offline:acme") != nil || Importable("https://example.test/feed.json") != nil {
		t.Error("only npm sources refuse an import")
	}
}
