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
	dir, err := os.MkdirTemp("", "upcheck-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "build upcheck:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	*binary = filepath.Join(dir, "upcheck")
	if err := Build(*binary); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// Build builds ./cmd/upcheck into out with the given build tags (the fault
// workload's control is built with the fence switched off this way).
func Build(out string, tags ...string) error {
	root, err := moduleRoot()
	if err != nil {
		return fmt.Errorf("build upcheck: %w", err)
	}
	args := []string{"build", "-o", out}
	for _, tag := range tags {
		args = append(args, "-tags", tag)
	}
	build := exec.Command("go", append(args, "./cmd/upcheck")...)
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build upcheck %v: %v\n%s", tags, err, b)
	}
	return nil
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
