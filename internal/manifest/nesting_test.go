package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/localfile"
	"github.com/upcheck/upcheck/internal/testing/namedpipe"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

const yamlHead = "components:\n  - code: core\n    name: Core\n    version: 1.0.0\n"

// A YAML manifest that nests deeper than MaxYAMLNesting is refused before
// the YAML parser sees it, naming the line; one within the limit is read.
// Not parallel: it measures the bytes allocated while no other test runs.
func TestADeeplyNestedYAMLManifestIsRefusedUnparsed(t *testing.T) {
	for name, deep := range map[string]string{
		"flow":  "policy: " + strings.Repeat("[", 100_000),
		"block": "policy:\n" + strings.Repeat("- ", 50_000) + "x\n",
	} {
		path := filepath.Join(t.TempDir(), "manifest.yaml")
		if err := os.WriteFile(path, []byte(yamlHead+deep), 0o644); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Load(path)
		runtime.ReadMemStats(&after)
		want := map[string]string{"flow": "line 5", "block": "line 6"}[name] + ": the YAML nests deeper than 64 levels"
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", name, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
			t.Errorf("%s: refusing it allocated %d KiB", name, alloc>>10)
		}
	}
	// Brackets in quoted scalars and comments are no nesting.
	m, err := ParseYAML([]byte(yamlHead + "# " + strings.Repeat("[", 100) + "\n  - code: blog\n    name: '" + strings.Repeat("[{", 100) + "'\n    version: 1.0.0\n"))
	if err != nil || len(m.Components) != 2 {
		t.Fatalf("a manifest within the limit: %v", err)
	}
}

// A named pipe at the manifest's path (nothing writes to it) is refused at
// once, in words, instead of waiting for a writer.
func TestANamedPipeAtTheManifestPathIsRefusedWithoutBlocking(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "manifest.json")
	namedpipe.New(t, path)
	var err error
	wait.Returns(t, "loading a named pipe", func() { _, err = Load(path) })
	if !errors.Is(err, localfile.ErrNotRegular) || !strings.Contains(err.Error(), path+" is not a regular file (it is a named pipe)") {
		t.Errorf("%v", err)
	}
}
