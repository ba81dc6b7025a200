package lockfile_test

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/lockfile"
	"github.com/upcheck/upcheck/internal/manifest"
)

const pnpmHead = "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      x:\n        specifier: ^1\n        version: 1.0.0\n"

const pnpmBlog = "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      '@vitnode/blog':\n        specifier: ^1\n        version: 1.0.0\n"

// A pnpm-lock.yaml that nests deeper than manifest.MaxYAMLNesting is
// refused before the YAML parser sees it (whose memory grows with the
// square of the depth: 100 KB of "[" took gigabytes), naming the line,
// and the components applied before stay. Not parallel: it measures the
// bytes allocated while no other test runs.
func TestADeeplyNestedPnpmLockIsRefusedUnparsed(t *testing.T) {
	for name, deep := range map[string]string{
		"flow sequences":  "junk: " + strings.Repeat("[", 100_000),
		"flow mappings":   "junk: " + strings.Repeat("{a: ", 25_000),
		"block sequences": "junk:\n" + strings.Repeat("- ", 50_000) + "x\n",
		"block mappings":  "junk:\n" + deepKeys(500),
	} {
		path := filepath.Join(t.TempDir(), "pnpm-lock.yaml")
		write(t, path, pnpmBlog)
		a := &applier{}
		w := lockfile.NewWatcher(path, lockfile.Options{}, a.apply)
		if applied, err := w.Look(t.Context()); !applied || err != nil {
			t.Fatalf("%s: the first look: %v, %v", name, applied, err)
		}
		write(t, path, pnpmBlog+"\n"+deep)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := w.Look(t.Context())
		runtime.ReadMemStats(&after)
		want := path + " line 9: the YAML nests deeper than 64 levels"
		switch name {
		case "block sequences":
			want = path + " line 10: the YAML nests deeper than 64 levels"
		case "block mappings":
			want = path + " line 73: the YAML nests deeper than 64 levels"
		}
		if !errors.Is(err, lockfile.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want ErrInvalid with %q", name, err, want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
			t.Errorf("%s: refusing it allocated %d KiB", name, alloc>>10)
		}
		if got := a.versions(); got != "1.0.0" {
			t.Errorf("%s: applied %q, want only the first content", name, got)
		}
	}
}

// deepKeys is n block mappings, each a key indented one more than its parent.
func deepKeys(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat(" ", i+1) + "k:\n")
	}
	return b.String()
}

// Where the scan of the bytes reads a quote that the tokenizer does not
// (a "'" after "b:" is part of the plain scalar), the count on the tokens
// refuses the nesting all the same, in the entries that are tokenized.
func TestNestingTheByteScanMissesIsRefusedByTheTokens(t *testing.T) {
	t.Parallel()
	body := pnpmHead + "importers:\n  j: b:'c\n  more: " + strings.Repeat("[", 1000)
	_, err := lockfile.Parse("pnpm-lock.yaml", []byte(body), lockfile.Options{})
	if !errors.Is(err, lockfile.ErrInvalid) || !strings.Contains(err.Error(), "pnpm-lock.yaml line 10: the YAML nests deeper than 64 levels") {
		t.Errorf("%v", err)
	}
}

// Nesting within the limit is read, and brackets inside quoted scalars,
// block scalars and comments are no nesting.
func TestPnpmLockNestingWithinTheLimitIsRead(t *testing.T) {
	t.Parallel()
	brackets := strings.Repeat("[{", 100)
	within := pnpmHead +
		"settings: " + strings.Repeat("[", manifest.MaxYAMLNesting-1) + strings.Repeat("]", manifest.MaxYAMLNesting-1) + "\n" +
		"quoted: '" + brackets + "'\n" +
		"doubled: \"" + brackets + "\"\n" +
		"block: |\n  " + brackets + "\n  '\n" +
		"# " + brackets + "\n" +
		"catalogs: {a: " + strings.Repeat("[", manifest.MaxYAMLNesting-2) + strings.Repeat("]", manifest.MaxYAMLNesting-2) + "}\n"
	l, err := lockfile.Parse("pnpm-lock.yaml", []byte(within), lockfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := l.Manifest
	if len(m.Components) != 1 || m.Components[0].Name != "x" {
		t.Errorf("components %+v", m.Components)
	}
	over := pnpmHead + "settings: " + strings.Repeat("[", manifest.MaxYAMLNesting+1) + strings.Repeat("]", manifest.MaxYAMLNesting+1) + "\n"
	if _, err := lockfile.Parse("pnpm-lock.yaml", []byte(over), lockfile.Options{}); err == nil || !strings.Contains(err.Error(), "pnpm-lock.yaml line 8: the YAML nests deeper than 64 levels") {
		t.Errorf("one level past the limit: %v", err)
	}
}
