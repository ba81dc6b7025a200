package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

const (
	parentMiB = 160
	childMiB  = 16
)

// The child of TestPeakRSSIsTheChilds: it touches childMiB of memory, says
// so on stderr, and holds it until its stdin closes.
func init() {
	if os.Getenv("BENCH_RSS_CHILD") == "" {
		return
	}
	mem := touch(childMiB)
	os.Stderr.WriteString("ready\n")
	io.Copy(io.Discard, os.Stdin)
	runtime.KeepAlive(mem)
	os.Exit(0)
}

func touch(mib int) []byte {
	mem := make([]byte, mib<<20)
	for i := range len(mem) / 4096 {
		mem[i*4096] = 1
	}
	return mem
}

// readyWriter notes when the child says it is ready: it holds its
// memory from then on.
type readyWriter struct {
	ready atomic.Bool
	mu    sync.Mutex
	seen  bytes.Buffer
}

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen.Write(p)
	if bytes.Contains(w.seen.Bytes(), []byte("ready\n")) {
		w.ready.Store(true)
	}
	return len(p), nil
}

// peakRSS measures the child: a bench holding far more memory than the
// check it runs does not count, as it does in getrusage's Maxrss.
func TestPeakRSSIsTheChilds(t *testing.T) {
	parent := touch(parentMiB)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BENCH_RSS_CHILD=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// The child's stdin is closed (it exits) once a mark was read after
	// it said it was ready, so that its peak is read before it ends.
	ready := &readyWriter{}
	cmd.Stderr = ready
	var closing sync.Once
	_, kib, err := peakRSSSeen(cmd, func(int64) {
		if ready.ready.Load() {
			closing.Do(func() { stdin.Close() })
		}
	})
	runtime.KeepAlive(parent)
	if err != nil {
		t.Fatal(err)
	}
	mib := kib >> 10
	t.Logf("child's peak %d MiB; getrusage's Maxrss %d MiB", mib, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss>>10)
	if mib < childMiB || mib >= parentMiB {
		t.Errorf("peak RSS %d MiB, want the child's (%d MiB and a little), not the parent's (%d MiB)", mib, childMiB, parentMiB)
	}
}
