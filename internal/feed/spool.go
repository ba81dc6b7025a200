package feed

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
)

// DefaultSpoolTimeout bounds one attempt of a [Spool] whose request sets
// no Timeout: a large archive on a slow link takes minutes, not the
// seconds an update document is allowed.
const DefaultSpoolTimeout = 10 * time.Minute

// Download is the outcome of [Spool].
type Download struct {
	// Path is the spooled file; empty when NotModified. The caller
	// removes it when done.
	Path string
	// NotModified: the server answered 304 to the validators.
	NotModified bool
	// ETag and LastModified are the validators to store for next time.
	ETag, LastModified string
	// Bytes is the size of the file.
	Bytes int64
}

// Spool downloads req.URL through f into a new temporary file under dir,
// conditionally (req's ETag and LastModified), streaming: the body is never
// held in memory. req.MaxBody caps the file (DefaultLimits().MaxArchive when
// zero) and req.Timeout each attempt (DefaultSpoolTimeout when zero); a
// retried attempt starts the file again. A 304 returns NotModified and no
// file. On error no file is left behind; fetch's errors are wrapped
// (fetch.ErrTooLarge, fetch.IsCancelled, …).
func Spool(ctx context.Context, f *fetch.Fetcher, req fetch.Request, dir string) (Download, error) {
	if req.MaxBody <= 0 {
		req.MaxBody = DefaultLimits().MaxArchive
	}
	if req.Timeout <= 0 {
		req.Timeout = DefaultSpoolTimeout
	}
	file, err := os.CreateTemp(dir, "upcheck-feed-*.download")
	if err != nil {
		return Download{}, fmt.Errorf("spool feed: %w: %w", ErrSpoolDir, err)
	}
	keep := false
	defer func() {
		if !keep {
			_ = file.Close()
			_ = os.Remove(file.Name())
		}
	}()
	req.Consume = func(r io.Reader) error {
		if _, err := file.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("%w: %w", ErrSpoolDir, err)
		}
		if err := file.Truncate(0); err != nil {
			return fmt.Errorf("%w: %w", ErrSpoolDir, err)
		}
		_, err := io.Copy(spoolWriter{file}, r)
		return err
	}
	req.Compressed = false
	resp, err := f.Fetch(ctx, req)
	if err != nil {
		return Download{}, fmt.Errorf("spool feed: %w", err)
	}
	d := Download{NotModified: resp.NotModified, ETag: resp.ETag, LastModified: resp.LastModified}
	if resp.NotModified {
		return d, nil
	}
	if err := file.Close(); err != nil {
		return Download{}, fmt.Errorf("spool feed: %w: %w", ErrSpoolDir, err)
	}
	keep = true
	d.Path, d.Bytes = file.Name(), resp.Bytes
	return d, nil
}

// spoolWriter marks the spooled file's write errors (a full disk) as
// ErrSpoolDir, apart from the body's read errors, which are the server's.
// It hides the file's ReadFrom, so that io.Copy's errors come from one
// side or the other.
type spoolWriter struct{ f *os.File }

func (w spoolWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrSpoolDir, err)
	}
	return n, err
}
