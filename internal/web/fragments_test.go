package web

import (
	"fmt"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/store"
)

// A fragment is made once per snapshot, key and second, never served for
// another snapshot or another query, and an older snapshot's fragment
// never replaces a newer one's.
func TestFragmentsAreKeptPerSnapshotAndQuery(t *testing.T) {
	var f fragments
	builds := 0
	get := func(snap *catalog.Snapshot, key fragmentKey, want string) {
		t.Helper()
		b, err := f.get(snap, key, func() ([]byte, error) {
			builds++
			return fmt.Appendf(nil, "%p %+v", snap, key), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != fmt.Sprintf("%p %+v", snap, key) {
			t.Fatalf("got %q for %p %+v", b, snap, key)
		}
	}
	now := time.Now()
	old, snap, newer := &catalog.Snapshot{ReadAt: now.Add(-time.Second)}, &catalog.Snapshot{ReadAt: now},
		&catalog.Snapshot{ReadAt: now.Add(time.Second)}
	base := keyOf("page", store.CatalogFilter{Limit: 50}, 100)
	variants := []fragmentKey{base}
	for _, change := range []func(*fragmentKey){
		func(k *fragmentKey) { k.kind = "api" },
		func(k *fragmentKey) { k.status = "security" },
		func(k *fragmentKey) { k.search = "blog" },
		func(k *fragmentKey) { k.offset = 50 },
		func(k *fragmentKey) { k.limit = 51 },
		func(k *fragmentKey) { k.after = store.CatalogCursor{Rank: 1, Name: "a", Code: "a"} },
		func(k *fragmentKey) { k.second = 101 },
	} {
		k := base
		change(&k)
		variants = append(variants, k)
	}
	for _, k := range variants {
		get(snap, k, "")
		get(snap, k, "")
	}
	if builds != len(variants) {
		t.Fatalf("%d builds for %d distinct keys asked twice each", builds, len(variants))
	}
	get(newer, base, "")
	get(old, base, "") // made for its request, not kept
	get(newer, base, "")
	if builds != len(variants)+2 {
		t.Fatalf("%d builds; want the newer snapshot's fragment kept and the older's made once", builds)
	}
	for i := range maxFragments + 10 { // the bound: still right after it drops what it kept
		get(newer, keyOf("api", store.CatalogFilter{Offset: i}, 0), "")
	}
}
