//go:build faults

// Package faulttest is the fault workload of docs/reliability.md: three
// real upcheck instances with lease timings of seconds share one database;
// clients press the manual check and dismiss advisories, publishers change
// their documents, and a nemesis pauses, kills and restarts instances,
// restarts or crashes PostgreSQL, terminates its backends and disturbs the
// connections between the instances and PostgreSQL through a toxiproxy.
// Afterwards a checker reads what happened — the database's records, a
// commit-time audit of every write, the clients' answers — and says whether
// the lease and the fence held. A control runs the same workload on a
// binary built with the fence switched off (tag faultcontrol) and must be
// caught.
//
// `make test` runs it (tag faults) for about a minute with a fixed seed;
// `make soak` runs it longer with random seeds. UPCHECK_FAULT_SEED reruns
// a seed; UPCHECK_FAULT_DURATION sets the nemesis's run.
package faulttest

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/testing/testbin"
)

// defaultSeed is make test's: the same run each time.
const defaultSeed = 20261201

var (
	binary  string // the normal build
	control struct {
		once sync.Once
		path string
		err  error
	}
)

func TestMain(m *testing.M) { testbin.Main(m, &binary) }

// controlBinary is upcheck built with the fence switched off.
func controlBinary(t *testing.T) string {
	t.Helper()
	control.once.Do(func() {
		control.path = filepath.Join(filepath.Dir(binary), "upcheck-nofence")
		control.err = testbin.Build(control.path, "faultcontrol")
	})
	if control.err != nil {
		t.Fatal(control.err)
	}
	return control.path
}

// seed is UPCHECK_FAULT_SEED ("random" picks one), else defaultSeed. It is
// printed first, so that a failing run can be rerun.
func seed(t *testing.T) uint64 {
	t.Helper()
	s := uint64(defaultSeed)
	switch v := os.Getenv("UPCHECK_FAULT_SEED"); v {
	case "":
	case "random":
		s = rand.Uint64() % 1_000_000_000
	default:
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("UPCHECK_FAULT_SEED=%q: %v", v, err)
		}
		s = n
	}
	t.Logf("seed %d (rerun with UPCHECK_FAULT_SEED=%d)", s, s)
	return s
}

// duration is how long the nemesis runs: UPCHECK_FAULT_DURATION or d.
func duration(t *testing.T, d time.Duration) time.Duration {
	t.Helper()
	if v := os.Getenv("UPCHECK_FAULT_DURATION"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("UPCHECK_FAULT_DURATION=%q: %v", v, err)
		}
	}
	return d
}
