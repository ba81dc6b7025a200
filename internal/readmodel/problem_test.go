package readmodel

import (
	"strings"
	"testing"
)

// Every kind of failure (AllErrorKinds) but ErrorOther has a sentence of
// its own: none falls back on the general one, and none carries the
// technical text.
func TestEveryErrorKindHasASentence(t *testing.T) {
	t.Parallel()
	general := ProblemSentence("", "")
	args := map[ErrorKind]string{
		ErrorHTTPStatus: "503", ErrorTimeout: "15s", ErrorPrivateAddress: "10.0.0.7",
		ErrorMalformed: "malformed JSON at line 3, column 5: unexpected end of input",
		ErrorRollback:  "41 < 42", ErrorKeyStatement: "signature",
	}
	for _, kind := range AllErrorKinds() {
		got := ProblemSentence(string(kind), args[kind])
		if own := got != general && got != ""; own != (kind != ErrorOther) {
			t.Errorf("%s: %q", kind, got)
		}
	}
	for _, tc := range []struct {
		kind      ErrorKind
		arg, want string
	}{
		{ErrorHTTPStatus, "503", "The publisher’s server answered 503 Service Unavailable."},
		{ErrorTimeout, "10s", "Timed out after 10 s: the publisher did not answer in time."},
		{ErrorPrivateAddress, "10.0.0.7", "set UPCHECK_ALLOW_PRIVATE_SOURCES=1 to allow it"},
		{ErrorMalformed, "malformed JSON at line 3, column 5: unexpected end of input",
			"The document is malformed (malformed JSON at line 3, column 5: unexpected end of input)."},
		{ErrorRollback, "41 < 42", "sequence 41, after 42 was accepted"},
		{ErrorBadSignature, "", "The signature does not match the keys trusted for this source"},
		{ErrorKeyStatement, "signature", "it is not signed by the keys trusted now"},
		{ErrorKeyStatement, "version 2 <= 3", "its version 2 is not newer than version 3, already accepted"},
		{ErrorKeyStatement, "malformed", "it is not a valid key statement"},
	} {
		if got := ProblemSentence(string(tc.kind), tc.arg); !strings.Contains(got, tc.want) {
			t.Errorf("%s %q: %q, want it to say %q", tc.kind, tc.arg, got, tc.want)
		}
	}
}

// The two-value arguments are written and read back by readmodel alone:
// what updatecheck records (RollbackArg, KeyStatementVersionArg) is what
// the sentences name.
func TestFailureArgumentsRoundTrip(t *testing.T) {
	t.Parallel()
	if in, stored, ok := RollbackSequences(RollbackArg(41, 42)); !ok || in != "41" || stored != "42" {
		t.Errorf("RollbackSequences(RollbackArg(41, 42)) = %q, %q, %v", in, stored, ok)
	}
	if got := ProblemSentence(string(ErrorRollback), RollbackArg(41, 42)); !strings.Contains(got, "(sequence 41, after 42 was accepted)") {
		t.Errorf("rollback: %q", got)
	}
	if got := ProblemSentence(string(ErrorKeyStatement), KeyStatementVersionArg(2, 3)); !strings.Contains(got, "its version 2 is not newer than version 3") {
		t.Errorf("key statement: %q", got)
	}
}
