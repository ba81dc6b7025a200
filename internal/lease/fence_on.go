//go:build !faultcontrol

package lease

// fenceOff is false in every build but the fault workload's control
// (internal/testing/faulttest, build tag faultcontrol): a fenced write checks that
// its owner holds the lease.
const fenceOff = false
