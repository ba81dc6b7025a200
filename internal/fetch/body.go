package fetch

import (
	"errors"
	"io"
)

// bodyReader reads a response body under a cap, keeping apart what went
// wrong: the body passed the cap (over), or reading it failed (err, a
// network failure or the attempt's deadline), so that a consumer's own
// error is not taken for either.
type bodyReader struct {
	r    io.Reader
	max  int64
	n    int64
	over bool
	err  error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.over {
		return 0, ErrTooLarge
	}
	if room := b.max + 1 - b.n; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.max {
		b.over = true
		return n, ErrTooLarge
	}
	if err != nil && !errors.Is(err, io.EOF) {
		b.err = err
	}
	return n, err
}

// ConsumeError wraps the error of a Request's Consume: the body arrived,
// what it holds was refused. It is never retried.
type ConsumeError struct{ Err error }

func (e *ConsumeError) Error() string { return e.Err.Error() }

func (e *ConsumeError) Unwrap() error { return e.Err }
