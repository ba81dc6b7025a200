//go:build faults

package faulttest

import (
	"fmt"
	"net/http"
	"time"

	"github.com/anishathalye/porcupine"
)

// The lease's epoch as a register, checked for linearizability with
// porcupine: acquisitions write epoch e (only over e-1), and reads return
// the register. The history joins three views of it on one clock (the
// database and the test run on the same machine, so clock_timestamp() and
// time.Now() read the same wall clock):
//
//   - every acquisition of lease_acquisitions, from its acquired_at (it
//     cannot be visible before) to the next acquisition's acquired_at (the
//     next acquire read it, so it had committed);
//   - every sample of the lease row, from when it was asked to when it was
//     answered;
//   - every manual check answered 200 with its epoch: the register held
//     that epoch at some moment of the request.
//
// A history is not linearizable when, say, a reader saw an epoch before it
// was acquired, or an older epoch after a newer one, or a check's answer
// names an epoch that was not the lease's while the request ran.
type regInput struct {
	acquire bool
	epoch   int64
}

var registerModel = porcupine.Model{
	Init: func() any { return int64(0) },
	Step: func(state, input, output any) (bool, any) {
		st, in := state.(int64), input.(regInput)
		if in.acquire {
			return in.epoch == st+1, in.epoch
		}
		return output.(int64) == st, st
	},
	DescribeOperation: func(input, output any) string {
		if in := input.(regInput); in.acquire {
			return fmt.Sprintf("acquire %d", in.epoch)
		}
		return fmt.Sprintf("read %d", output)
	},
}

// checkLinearizable builds the history and runs porcupine for at most
// timeout. It returns the number of operations checked.
func checkLinearizable(f findings, acquired map[int64]time.Time, samples []sample, answers []answer, end time.Time, timeout time.Duration) int {
	var ops []porcupine.Operation
	for e, at := range acquired {
		ret := end
		if next, ok := acquired[e+1]; ok {
			ret = next
		}
		ops = append(ops, porcupine.Operation{ClientId: 0, Input: regInput{acquire: true, epoch: e}, Call: at.UnixNano(), Output: int64(0), Return: ret.UnixNano()})
	}
	for _, s := range samples {
		ops = append(ops, porcupine.Operation{ClientId: 1, Input: regInput{}, Call: s.call.UnixNano(), Output: s.epoch, Return: s.ret.UnixNano()})
	}
	for _, a := range answers {
		if a.kind == "check" && a.code == http.StatusOK && a.epoch > 0 {
			ops = append(ops, porcupine.Operation{ClientId: 2, Input: regInput{}, Call: a.began.UnixNano(), Output: a.epoch, Return: a.ended.UnixNano()})
		}
	}
	switch porcupine.CheckOperationsTimeout(registerModel, ops, timeout) {
	case porcupine.Illegal:
		f.add("linearizable lease", "the history of %d operations on the lease's epoch is not linearizable", len(ops))
	case porcupine.Unknown:
		f.add("checker", "porcupine could not decide on %d operations within %s", len(ops), timeout)
	}
	return len(ops)
}
