package manifest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrNotRegularFile means a manifest or lockfile path names something other
// than a regular file: a named pipe, a device, a socket or a directory.
var ErrNotRegularFile = errors.New("is not a regular file")

// ReadFile reads the regular file at path, at most limit+1 bytes, so that
// the caller can tell a file past its cap. It opens the file without
// blocking and refuses anything else in words: opening a named pipe for
// reading would wait for a writer, holding every check, start and
// shutdown that reads it (and a device could be read for ever).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s %w (it is %s)", path, ErrNotRegularFile, kind(info.Mode()))
	}
	return io.ReadAll(io.LimitReader(f, limit+1))
}

// kind words a file mode that is not a regular file's.
func kind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m.IsDir():
		return "a directory"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a file"
}
