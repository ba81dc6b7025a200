// Package testbin builds the real upcheck binary once for a test binary
// (the crash suite, the cluster behind nginx, the failover drill): tests
// that run what operators run, not the packages inside it.
package testbin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Main builds ./cmd/upcheck into a temporary folder, stores its path in
// binary, runs the tests and exits with their code; call it from
// TestMain. A failed build ends the test binary with its output.
func Main(m *testing.M, binary *string) {
	os.Exit(run(m, binary))
}

func run(m *testing.M, binary *string) int {
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "build upcheck:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "upcheck-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "build upcheck:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	*binary = filepath.Join(dir, "upcheck")
	build := exec.Command("go", "build", "-o", *binary, "./cmd/upcheck")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build upcheck: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// moduleRoot is the folder of go.mod above the working directory (a
// test runs in its package's folder).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
