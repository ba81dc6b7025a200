package fetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
)

// SpoolAbove is the size from which the uncompressed body of a Compressed
// request is written to a temporary file as it arrives instead of being
// held in memory (Response.Spool): a registry or proxy that ignores
// Accept-Encoding sends a popular package's tens of megabytes as they are.
const SpoolAbove = 1 << 20

// Spool is a body written to a temporary file as it arrived: a reader of
// it from its start, once. The file has no name left on disk (it is
// removed as soon as it is made, where the system allows), so nothing
// outlives the process; Close releases it.
type Spool struct {
	f      *os.File
	name   string // still to remove at Close ("" once removed)
	closed bool
}

// Read reads the body on from where the last Read left off.
func (s *Spool) Read(p []byte) (int, error) { return s.f.Read(p) }

// Close releases the file; closing again does nothing.
func (s *Spool) Close() error {
	if s == nil || s.closed {
		return nil
	}
	s.closed = true
	err := s.f.Close()
	if s.name != "" {
		err = errors.Join(err, os.Remove(s.name))
	}
	return err
}

// spoolError is the failure to write a body to its temporary file: the
// body arrived, the machine could not keep it (a full disk); retrying in a
// second would fail the same way.
type spoolError struct{ err error }

func (e *spoolError) Error() string { return "write the body to a temporary file: " + e.err.Error() }

func (e *spoolError) Unwrap() error { return e.err }

// readPlain reads the uncompressed body of a Compressed request: held in
// memory below SpoolAbove bytes, from there on written to a temporary
// file of os.TempDir (Spool) and never held whole. When no temporary file can be
// made (a read-only file system) the body is held in memory, as other
// bodies are, and that is logged. A read error is r's to report (r.Err,
// r.Over); the error returned then is only what stopped reading.
func (f *Fetcher) readPlain(ctx context.Context, r *CappedReader, length int64, url string) ([]byte, *Spool, error) {
	head, err := readHead(r, length)
	if err != nil || len(head) < SpoolAbove {
		return head, nil, err
	}
	file, err := os.CreateTemp("", "upcheck-body-*")
	if err != nil {
		f.logger.WarnContext(ctx, "no temporary file for a large body: it is held in memory", "url", url, "error", err)
		buf := bytes.NewBuffer(head)
		_, err := buf.ReadFrom(r)
		return buf.Bytes(), nil, err
	}
	s := &Spool{f: file, name: file.Name()}
	if os.Remove(s.name) == nil {
		s.name = ""
	}
	if _, err := file.Write(head); err != nil {
		s.Close()
		return nil, nil, &spoolError{err}
	}
	if _, err := io.Copy(file, r); err != nil {
		s.Close()
		if r.Err != nil || r.Over {
			return nil, nil, err
		}
		return nil, nil, &spoolError{err}
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		s.Close()
		return nil, nil, &spoolError{err}
	}
	return nil, s, nil
}

// readHead reads r up to its end or SpoolAbove bytes, whichever comes
// first, into a buffer made at once when the server announced the length,
// doubled from 32 KiB otherwise: a body of SpoolAbove or more allocates
// about twice SpoolAbove before it is spooled.
func readHead(r io.Reader, length int64) ([]byte, error) {
	size := int64(32 << 10)
	if length > 0 {
		size = length + 1 // one more, so that the end is seen without growing
	}
	b := make([]byte, 0, min(size, SpoolAbove))
	for {
		if len(b) == cap(b) {
			if len(b) == SpoolAbove {
				return b, nil
			}
			b = append(make([]byte, 0, min(2*cap(b), SpoolAbove)), b...)
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// readBody reads r to its end into one buffer, made at once when the
// server announced the length (length > 0, already held to the cap), so a
// body of megabytes is not copied again at each doubling.
func readBody(r io.Reader, length int64) ([]byte, error) {
	if length <= 0 {
		return io.ReadAll(r)
	}
	// One byte more than announced, so that the end is seen without
	// growing the buffer.
	b := make([]byte, 0, length+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) { // longer than announced: on as io.ReadAll goes
			rest, err := io.ReadAll(r)
			return append(b, rest...), err
		}
	}
}
