package release

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every error caused by bad input: a version, a
// range or a policy that does not parse. Callers record such errors against
// the source or the component instead of retrying: the same input fails
// again. updatedoc's ErrInvalid is this same value, so a document's errors
// and the domain's answer one errors.Is.
var ErrInvalid = errors.New("invalid input")

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
