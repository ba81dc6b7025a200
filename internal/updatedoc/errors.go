package updatedoc

import (
	"errors"
	"fmt"

	"github.com/upcheck/upcheck/internal/release"
)

var (
	// ErrInvalid is wrapped by every error caused by bad input: an update
	// document that fails validation, a version or range that does not
	// parse, a malformed key. Callers record such errors against the source
	// or the component instead of retrying: the same input fails again.
	// It is release.ErrInvalid itself, so that a document's errors and the
	// domain's (a version, a range, a policy) answer one errors.Is.
	ErrInvalid = release.ErrInvalid

	// ErrBadSignature means a signature was present but does not verify: it
	// is not base64, has the wrong length, or was made by another key or over
	// other bytes. A source with a pinned key must refuse the document.
	ErrBadSignature = errors.New("bad signature")

	// ErrUnsigned means no signature was supplied although one is required.
	// It is distinct from ErrBadSignature so that the operator can tell "the
	// publisher stopped signing" from "someone altered the document".
	ErrUnsigned = errors.New("document is not signed")

	// ErrRollback means a document's sequence is lower than the one already
	// stored: an older document is being replayed (a stale mirror or an
	// attacker), and accepting it would bring back fixed vulnerabilities as
	// "up to date".
	ErrRollback = errors.New("update document rolled back")
)

// invalidError carries a message that already names the offending place,
// so that the text printed to an operator is not prefixed by a generic
// sentinel, while errors.Is(err, ErrInvalid) still holds. cause, when set,
// keeps the underlying library error reachable for errors.As.
type invalidError struct {
	msg   string
	cause error
}

func (e *invalidError) Error() string { return e.msg }

func (e *invalidError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrInvalid}
	}
	return []error{ErrInvalid, e.cause}
}

// invalidf builds an error wrapping ErrInvalid with a formatted message;
// cause may be nil. Messages that want the cause's text say so with %v.
func invalidf(cause error, format string, args ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, args...), cause: cause}
}
