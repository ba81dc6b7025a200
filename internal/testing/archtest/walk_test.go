package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Which Go files walkGoFiles hands over.
const (
	allGoFiles = iota
	testFiles
	productFiles // not _test.go
)

// walkGoFiles calls fn with every Go file of the module of the kind asked,
// by its path relative to the module's root (slashes) and its path on
// disk. Hidden folders, node_modules and testdata are never entered, nor
// any folder skip names (relative path). It fails the test when the
// root is not the module's or when it found fewer than min files (a walk
// that reads nothing checks nothing).
func walkGoFiles(t *testing.T, kind int, min int, skip func(rel string) bool, fn func(rel, path string)) {
	t.Helper()
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(abs, "go.mod")); err != nil || !strings.Contains(string(b), "module "+module+"\n") {
		t.Fatalf("%s is not the module's root: %v", abs, err)
	}
	files := 0
	err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(abs, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" || skip != nil && skip(rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		test := strings.HasSuffix(path, "_test.go")
		if !strings.HasSuffix(path, ".go") || kind == testFiles && !test || kind == productFiles && test {
			return nil
		}
		files++
		fn(rel, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < min {
		t.Fatalf("read %d files under %s; the walk is wrong", files, abs)
	}
}
