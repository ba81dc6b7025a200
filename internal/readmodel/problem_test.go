package readmodel

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Every kind of failure (AllErrorKinds) but ErrorOther has a sentence of
// its own: none falls back on the general one, and none carries the
// technical text.
func TestEveryErrorKindHasASentence(t *testing.T) {
	t.Parallel()
	general := ProblemSentence("", FailureArgs{})
	args := map[ErrorKind]FailureArgs{
		ErrorHTTPStatus: {Status: 503}, ErrorTimeout: {Timeout: 15 * time.Second}, ErrorPrivateAddress: {Address: "10.0.0.7"},
		ErrorMalformed: {Problem: "malformed JSON at line 3, column 5: unexpected end of input"},
		ErrorRollback:  RollbackArgs(41, 42), ErrorKeyStatement: {Statement: StatementUnsigned},
	}
	for _, kind := range AllErrorKinds() {
		got := ProblemSentence(string(kind), args[kind])
		if own := got != general && got != ""; own != (kind != ErrorOther) {
			t.Errorf("%s: %q", kind, got)
		}
	}
	for _, tc := range []struct {
		kind ErrorKind
		args FailureArgs
		want string
	}{
		{ErrorHTTPStatus, FailureArgs{Status: 503}, "The publisher’s server answered 503 Service Unavailable."},
		{ErrorTimeout, FailureArgs{Timeout: 10 * time.Second}, "Timed out after 10 s: the publisher did not answer in time."},
		{ErrorPrivateAddress, FailureArgs{Address: "10.0.0.7"}, "set UPCHECK_ALLOW_PRIVATE_SOURCES=1 to allow it"},
		{ErrorMalformed, FailureArgs{Problem: "malformed JSON at line 3, column 5: unexpected end of input"},
			"The document is malformed (malformed JSON at line 3, column 5: unexpected end of input)."},
		{ErrorRollback, RollbackArgs(41, 42), "sequence 41, after 42 was accepted"},
		{ErrorBadSignature, FailureArgs{}, "The signature does not match the keys trusted for this source"},
		{ErrorKeyStatement, FailureArgs{Statement: StatementUnsigned}, "it is not signed by the keys trusted now"},
		{ErrorKeyStatement, KeyStatementNotNewerArgs(2, 3), "its version 2 is not newer than version 3, already accepted"},
		{ErrorKeyStatement, FailureArgs{Statement: StatementMalformed}, "it is not a valid key statement"},
	} {
		if got := ProblemSentence(string(tc.kind), tc.args); !strings.Contains(got, tc.want) {
			t.Errorf("%s %+v: %q, want it to say %q", tc.kind, tc.args, got, tc.want)
		}
	}
}

// The arguments are stored as their JSON and worded when read back: what
// updatecheck records (RollbackArgs, KeyStatementNotNewerArgs) is what the
// sentences name, through the store's JSON.
func TestFailureArgumentsRoundTrip(t *testing.T) {
	t.Parallel()
	roundTrip := func(args FailureArgs) FailureArgs {
		t.Helper()
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		var out FailureArgs
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if sq := roundTrip(RollbackArgs(41, 42)).Sequences; sq == nil || sq.Refused != 41 || sq.Accepted != 42 {
		t.Errorf("RollbackArgs(41, 42) read back as %+v", sq)
	}
	if got := ProblemSentence(string(ErrorRollback), roundTrip(RollbackArgs(41, 42))); !strings.Contains(got, "(sequence 41, after 42 was accepted)") {
		t.Errorf("rollback: %q", got)
	}
	if got := ProblemSentence(string(ErrorKeyStatement), roundTrip(KeyStatementNotNewerArgs(2, 3))); !strings.Contains(got, "its version 2 is not newer than version 3") {
		t.Errorf("key statement: %q", got)
	}
	// A sequence of 0 is a sequence: it is stored, not dropped.
	if got := ProblemSentence(string(ErrorRollback), roundTrip(RollbackArgs(0, 1))); !strings.Contains(got, "(sequence 0, after 1 was accepted)") {
		t.Errorf("rollback from 0: %q", got)
	}
}
