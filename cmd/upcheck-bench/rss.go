package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// peakRSS runs cmd to its end and returns its stdout and the peak RSS of
// its process in KiB: the kernel's high-water mark of the process's own
// memory (VmHWM in /proc/PID/status), read every 10 ms while it runs.
//
// Not getrusage's Maxrss: Go starts a child with vfork, sharing the
// parent's memory until exec, and at exec Linux keeps the parent's
// high-water mark as the child's maxrss; the bench, holding hundreds of
// megabytes of package documents, would be measured instead of the check.
// VmHWM belongs to the memory the process has after exec. Only a peak
// reached in the last 10 ms before the process exits can be missed; a
// check's last milliseconds are its clean-up.
func peakRSS(cmd *exec.Cmd) ([]byte, int64, error) { return peakRSSSeen(cmd, nil) }

// peakRSSSeen is peakRSS, telling seen (when not nil) each time the mark
// was read.
func peakRSSSeen(cmd *exec.Cmd, seen func(kib int64)) ([]byte, int64, error) {
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	var peak int64
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if kib, ok := vmHWM(status); ok {
			peak = max(peak, kib)
			if seen != nil {
				seen(kib)
			}
		}
		select {
		case err := <-done:
			return out.Bytes(), peak, err
		case <-tick.C:
		}
	}
}

// vmHWM reads the VmHWM line of a /proc/PID/status file; false once the
// process has exited (its memory is gone, and with it the line).
func vmHWM(status string) (int64, bool) {
	f, err := os.Open(status)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kib, err == nil
		}
	}
	return 0, false
}
