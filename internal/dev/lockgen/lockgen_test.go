package lockgen_test

import (
	"reflect"
	"testing"

	"github.com/upcheck/upcheck/internal/dev/lockgen"
	"github.com/upcheck/upcheck/internal/lockfile"
)

// The generated package-lock.json reads back, through the lockfile's own
// reader, as the tree it was made from: its shape is npm's.
func TestPackageLockReadsAsItsTree(t *testing.T) {
	t.Parallel()
	want := lockgen.Tree(3000, "http://127.0.0.1:9/")
	body, err := lockgen.PackageLock(want, "site")
	if err != nil {
		t.Fatal(err)
	}
	l, err := lockfile.Parse("package-lock.json", body, lockfile.Options{Core: lockgen.Name(0)})
	if err != nil {
		t.Fatal(err)
	}
	got := l.Tree
	for i := range got.Packages {
		got.Packages[i].Line = 0
	}
	if len(got.Packages) != 3000 || len(got.Edges) != len(want.Edges) {
		t.Fatalf("read %d packages and %d edges, want 3000 and %d", len(got.Packages), len(got.Edges), len(want.Edges))
	}
	for i := range want.Packages {
		if !reflect.DeepEqual(got.Packages[i], want.Packages[i]) {
			t.Fatalf("package %d read as %+v, want %+v", i, got.Packages[i], want.Packages[i])
		}
	}
	for i := range want.Edges {
		if got.Edges[i] != want.Edges[i] {
			t.Fatalf("edge %d read as %+v, want %+v", i, got.Edges[i], want.Edges[i])
		}
	}
	if got.Hash() != want.Hash() {
		t.Fatal("the tree read hashes otherwise than the tree written")
	}
}
