package main

import (
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// Every status a check answers has its exit code, and no other status has
// one: a status added to readmodel.CheckStatus without an exit code fails
// here.
func TestEveryAnsweredStatusHasAnExitCode(t *testing.T) {
	t.Parallel()
	for _, s := range readmodel.AllCheckStatuses() {
		if _, ok := checkExit[s]; ok != s.Answered() {
			t.Errorf("status %s: exit code %v, answered by a check %v", s, ok, s.Answered())
		}
	}
	for s := range checkExit {
		if !s.Answered() {
			t.Errorf("exit code for %q, which no check answers", s)
		}
	}
}
