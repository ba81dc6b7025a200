package fetch

import (
	"errors"
	"io"
)

// CappedReader reads R under a cap, keeping apart what went wrong: more
// than Max bytes came (Over; the read that passed the cap fails with
// ErrTooLarge), or reading failed (Err, e.g. a network failure or a
// deadline), so that the error of whoever reads it is not taken for
// either. N counts the bytes read.
type CappedReader struct {
	R    io.Reader
	Max  int64
	N    int64
	Over bool
	Err  error
}

func (c *CappedReader) Read(p []byte) (int, error) {
	if c.Over {
		return 0, ErrTooLarge
	}
	if room := c.Max + 1 - c.N; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := c.R.Read(p)
	c.N += int64(n)
	if c.N > c.Max {
		c.Over = true
		return n, ErrTooLarge
	}
	if err != nil && !errors.Is(err, io.EOF) {
		c.Err = err
	}
	return n, err
}

// ConsumeError wraps the error of a Request's Consume: the body arrived,
// what it holds was refused. It is never retried.
type ConsumeError struct{ Err error }

func (e *ConsumeError) Error() string { return e.Err.Error() }

func (e *ConsumeError) Unwrap() error { return e.Err }
