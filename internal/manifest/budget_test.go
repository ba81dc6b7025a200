package manifest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A flat YAML manifest past MaxYAMLTokens or MaxYAMLKeys (nesting nothing)
// is refused before any token is made, naming the file, the line and the
// limit; the YAML library would have spent some 250 bytes a token and,
// on one large mapping, memory growing with the square of its keys. Not
// parallel: it measures the bytes allocated while no other test runs.
func TestAFlatYAMLManifestPastTheBudgetIsRefusedUnparsed(t *testing.T) {
	var keys strings.Builder
	keys.WriteString("policy:\n")
	for i := range MaxYAMLKeys + 1 {
		fmt.Fprintf(&keys, "  k%d: 1\n", i)
	}
	for name, c := range map[string]struct{ body, want string }{
		"tokens": {"policy: [" + strings.Repeat("1,", 3_000_000) + "1]\n", "line 5: the YAML to read has more than 200000 tokens"},
		"keys":   {keys.String(), fmt.Sprintf("line %d: a YAML mapping to read has more than 10000 keys", 5+MaxYAMLKeys+1)},
	} {
		path := filepath.Join(t.TempDir(), "manifest.yaml")
		if err := os.WriteFile(path, []byte(yamlHead+c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Load(path)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), path+" "+c.want) {
			t.Errorf("%s: %v; want %q", name, err, path+" "+c.want)
		}
		// The file is read (its size) and scanned; nothing else.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(yamlHead+c.body))+4<<20 {
			t.Errorf("%s: refusing a %d KiB file allocated %d KiB", name, len(c.body)>>10, alloc>>10)
		}
	}
}
