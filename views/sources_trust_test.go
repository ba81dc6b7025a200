package views

import (
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

func TestTrustInWords(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	soon, past, far := now.Add(6*24*time.Hour+time.Hour), now.Add(-48*time.Hour), now.Add(20*24*time.Hour)
	s41 := int64(41)
	verified := readmodel.SourceRow{Pin: "ed25519:test", SignatureState: "verified", VerifiedBy: []string{"ab12cd34…ef01"}, TrustedCount: 2, Sequence: &s41, ExpiresAt: &soon, ExpiresSoon: true}
	if got := trustLine(verified, now); got != "verified by key ab12cd34…ef01 (of 2 trusted), sequence 41, expires in 6 days" {
		t.Errorf("trust line %q", got)
	}
	if got := trustLine(readmodel.SourceRow{SignatureState: "unsigned"}, now); got != "unsigned (no key pinned)" {
		t.Errorf("unsigned %q", got)
	}
	for _, tc := range []struct {
		row  readmodel.SourceRow
		want string
	}{
		{verified, "expires in 6 days"},
		{readmodel.SourceRow{ExpiresAt: &past, Expired: true}, "expired 2 days ago: it is stale, and the last good data is kept"},
		{readmodel.SourceRow{Failing: true, LastErrorKind: string(readmodel.ErrorRollback), LastErrorArgs: readmodel.RollbackArgs(9, 41)}, "sent sequence 9 after 41 was accepted"},
		{readmodel.SourceRow{Failing: true, LastErrorKind: string(readmodel.ErrorBadSignature)}, "not signed by the keys trusted"},
		{readmodel.SourceRow{Failing: true, LastErrorKind: string(readmodel.ErrorKeyStatement)}, "key statement was refused"},
	} {
		if got := strings.Join(trustWarnings(tc.row, now), " "); !strings.Contains(got, tc.want) {
			t.Errorf("%+v: warnings %q, want %q", tc.row, got, tc.want)
		}
	}
	if got := trustWarnings(readmodel.SourceRow{ExpiresAt: &far, Failing: true, LastErrorKind: string(readmodel.ErrorHTTPStatus)}, now); len(got) != 0 {
		t.Errorf("nothing to say about trust, got %q", got)
	}
	// Whether the expiry is near is the database's judgement (ExpiresSoon,
	// on its clock), never this process's clock: the two cannot disagree.
	notYet := verified
	notYet.ExpiresSoon = false
	if got := trustWarnings(notYet, now); len(got) != 0 {
		t.Errorf("the database says the expiry is not near, the page warns %q", got)
	}
	behind := readmodel.SourceRow{ExpiresAt: &far, ExpiresSoon: true}
	if got := strings.Join(trustWarnings(behind, now), " "); !strings.Contains(got, "unless the publisher publishes a new one by then") {
		t.Errorf("the database says the expiry is near, the page warns %q", got)
	}
}
