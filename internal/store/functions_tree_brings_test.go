package store_test

import (
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// A change read is read again while a dependency it adds was not read
// for the check's bound, a failed fetch or its stored facts not read;
// not for one that gives no publish time (reading it again tells nothing
// more), nor for none.
func testTreeBringsUnread(t *testing.T, f *fdb) {
	for reason, want := range map[readmodel.UnreadReason]bool{readmodel.UnreadPastBound: true, readmodel.UnreadFailed: true,
		readmodel.UnreadNoTime: false, readmodel.UnreadNotChecked: true} {
		if got := f.bool(t, `SELECT upcheck_tree_brings_unread(jsonb_build_array(jsonb_build_object('name', 'x', 'reason', $1::text)))`,
			string(reason)); got != want {
			t.Errorf("%s: %v, want %v", reason, got, want)
		}
	}
	if f.bool(t, `SELECT upcheck_tree_brings_unread('[]')`) {
		t.Error("none: true")
	}
}
