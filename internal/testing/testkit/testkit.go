// Package testkit is the one kit of small helpers the tests share: a
// locked buffer, the module's root, cheap password-hashing parameters and
// short lease timings.
//
// It imports no product package, so that every package's own tests (and
// the harnesses they import, like pgtest) may import it without a cycle.
// The hasher and the timings are therefore plain structs with the same
// fields as auth.Hasher and lease.Timings; a test converts them
// (auth.Hasher(testkit.Hasher())), and the conversion stops compiling the
// day either side gains a field.
package testkit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Buffer is a bytes.Buffer behind a mutex: a log sink that a running
// server or process writes while the test reads it.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// ModuleRoot is the folder of go.mod above the working directory (a test
// runs in its package's folder).
func ModuleRoot() (string, error) {
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

// HasherParams has auth.Hasher's fields.
type HasherParams struct {
	Memory  uint32 // KiB
	Time    uint32 // passes over the memory
	Threads uint8  // lanes
}

// Hasher returns argon2id parameters that make a hash cost microseconds:
// the parameters travel inside each hash, so verification still works.
// Use it as auth.Hasher(testkit.Hasher()).
func Hasher() HasherParams { return HasherParams{Memory: 64, Time: 1, Threads: 1} }

// TimingsParams has lease.Timings' fields.
type TimingsParams struct {
	Lease     time.Duration
	Heartbeat time.Duration
	Cooldown  time.Duration
	Period    time.Duration
	TxTimeout time.Duration
}

// Timings returns lease timings long enough to be stable under -race on
// two cores and short enough for expiry tests to take seconds. Use it as
// lease.Timings(testkit.Timings()).
func Timings() TimingsParams {
	return TimingsParams{Lease: 2 * time.Second, Heartbeat: 300 * time.Millisecond, Cooldown: 3 * time.Second, Period: 24 * time.Hour, TxTimeout: time.Second}
}
