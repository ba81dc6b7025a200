package lockfile_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/lockfile"
	"github.com/upcheck/upcheck/internal/manifest"
)

// A flat pnpm-lock.yaml near the lockfile's size cap, nesting nothing, is
// refused where its entries read (importers) go past manifest.MaxYAMLTokens
// or MaxYAMLKeys, naming the file, the line and the limit, with the bytes
// allocated bounded by the file's size (the YAML library would have spent
// some 250 bytes a token: gigabytes); the components applied before stay.
// Not parallel: it measures the bytes allocated while no other test runs.
func TestAFlatPnpmLockPastTheBudgetIsRefusedWithBoundedAllocation(t *testing.T) {
	var keys strings.Builder
	for i := range manifest.MaxYAMLKeys + 1 {
		fmt.Fprintf(&keys, "      k%d: 1\n", i)
	}
	for name, c := range map[string]struct{ body, want string }{
		"tokens": {"      x: [" + strings.Repeat("1,", 24_000_000) + "1]\n", "line 4: the YAML to read has more than 200000 tokens"},
		"keys":   {keys.String(), fmt.Sprintf("line %d: a YAML mapping to read has more than 10000 keys", 3+manifest.MaxYAMLKeys+1)},
	} {
		path := filepath.Join(t.TempDir(), "pnpm-lock.yaml")
		write(t, path, pnpmBlog)
		a := &applier{}
		w := lockfile.NewWatcher(path, lockfile.Options{}, a.apply)
		if applied, err := w.Look(t.Context()); !applied || err != nil {
			t.Fatalf("%s: the first look: %v, %v", name, applied, err)
		}
		body := "lockfileVersion: '9.0'\nimporters:\n  .:\n" + c.body
		write(t, path, body)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := w.Look(t.Context())
		runtime.ReadMemStats(&after)
		if !errors.Is(err, lockfile.ErrInvalid) || !strings.Contains(err.Error(), path+" "+c.want) {
			t.Errorf("%s: %v; want ErrInvalid with %q", name, err, path+" "+c.want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(body))+8<<20 {
			t.Errorf("%s: refusing a %d MiB file allocated %d MiB", name, len(body)>>20, alloc>>20)
		}
		if got := a.versions(); got != "1.0.0" {
			t.Errorf("%s: applied %q, want only the first content", name, got)
		}
	}
}

// A realistic large pnpm-lock.yaml (a monorepo's: 20 MB, most of it
// packages and snapshots) is read whole, its packages and snapshots line
// by line, not by the YAML parser (parsed whole, 10 MB of a real lockfile
// peaked at 813 MiB of heap): 67,000 snapshots and 246,000 edges in
// about a second of CPU (0.85 s profiled; 2 to 5 s of wall time on the
// shared machine), allocating within ten times the file's size (147 MiB
// measured, 172 MiB under -race: the file once, the lines kept, the tree
// itself some 50 MiB, the slices' growth). A tree of this size is some ten times a large real
// site's.
func TestALargeRealisticPnpmLockIsRead(t *testing.T) {
	var b strings.Builder
	b.WriteString("lockfileVersion: '9.0'\n\nsettings:\n  autoInstallPeers: true\n  excludeLinksFromLockfile: false\n\nimporters:\n\n  .:\n    dependencies:\n")
	for i := range 300 {
		fmt.Fprintf(&b, "      '@site/dep%d':\n        specifier: ^1.2.0\n        version: 1.2.%d(react@18.3.1)\n", i, i)
	}
	b.WriteString("\npackages:\n\n")
	for i := 0; b.Len() < 10<<20; i++ {
		fmt.Fprintf(&b, "  '@scope/pkg%d@1.0.%d':\n    resolution: {integrity: sha512-6/mh1E2u2YgEsCHdY0Yx5oW+61gZU+1vXaoiHHrpKeuRNNgFvS+/jrwHiQhB5apAf5oB7UB7E19ol2R2LKH8hQ==}\n    engines: {node: '>=14.17'}\n    peerDependencies:\n      react: ^18 || ^19\n\n", i, i%7)
	}
	b.WriteString("snapshots:\n\n")
	for i := 0; b.Len() < 20<<20; i++ {
		fmt.Fprintf(&b, "  '@scope/pkg%d@1.0.%d(react@18.3.1)':\n    dependencies:\n      loose-envify: 1.4.0\n      js-tokens: 4.0.0\n    optionalDependencies:\n      fsevents: 2.3.3\n\n", i, i%7)
	}
	path := filepath.Join(t.TempDir(), "pnpm-lock.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	l, err := lockfile.Read(path, lockfile.Options{})
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	m := l.Manifest
	t.Logf("read a %d MiB pnpm-lock.yaml: %d packages, %d edges in %v, %d MiB allocated",
		b.Len()>>20, len(l.Tree.Packages), len(l.Tree.Edges), took.Round(time.Millisecond), (after.TotalAlloc-before.TotalAlloc)>>20)
	if snapshots := strings.Count(b.String(), "(react@18.3.1)':\n    dependencies:"); len(l.Tree.Packages) != snapshots {
		t.Errorf("%d packages in the tree, %d snapshots", len(l.Tree.Packages), snapshots)
	}
	// Every snapshot's loose-envify and js-tokens, and the importers'
	// packages, are installed nowhere: kept as edges to nothing, and
	// counted.
	if l.DanglingCount < 300 || len(l.Dangling) != lockfile.MaxDangling {
		t.Errorf("%d dangling, %d named", l.DanglingCount, len(l.Dangling))
	}
	if len(m.Components) != 300 || !slices.ContainsFunc(m.Components, func(c manifest.Component) bool { return c.Name == "@site/dep299" && c.Version == "1.2.299" }) {
		t.Errorf("%d components, @site/dep299 1.2.299 not among them", len(m.Components))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 10*uint64(b.Len()) {
		t.Errorf("reading a %d MiB lockfile allocated %d MiB", b.Len()>>20, alloc>>20)
	}
}
