// Package testbin builds the real upcheck binary once for a test binary
// (the crash suite, the cluster behind nginx, the failover drill): tests
// that run what operators run, not the packages inside it.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/upcheck/upcheck/internal/testing/testkit"
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
	root, err := testkit.ModuleRoot()
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
