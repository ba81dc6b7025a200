//go:build faultcontrol

package lease

// fenceOff switches the fence off: WithLease takes the lease's lock but
// does not check the owner, SendFenced sends its batch with no fence. This
// file exists only for the control of the fault workload
// (internal/testing/faulttest), which must catch the stale writes this lets
// through; the tag faultcontrol is named nowhere else, so no normal build
// (go build, make build, make test) can include it.
const fenceOff = true
