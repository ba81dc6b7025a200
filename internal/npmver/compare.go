package npmver

import "strings"

// Compare orders two versions as npm does (SemVer precedence: 9.0.0
// before 10.0.0, a pre-release before its release), each read by Parse
// after Clean, for the lists the pages show: a version that does not parse
// sorts after every one that does, those among themselves by text, and two
// of equal precedence ("1.0.0+a", "1.0.0+b") by text, so that the order
// is total. It returns -1, 0 or +1.
func Compare(a, b string) int {
	va, errA := Parse(Clean(a))
	vb, errB := Parse(Clean(b))
	switch {
	case errA != nil && errB != nil:
		return strings.Compare(a, b)
	case errA != nil:
		return 1
	case errB != nil:
		return -1
	}
	if c := va.Compare(vb); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}
