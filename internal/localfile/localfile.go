// Package localfile opens the files an operator names — a setting's path,
// a command's argument — without blocking: opening a named pipe for
// reading waits for a writer, holding the check, start, shutdown or
// command that reads it, and a device may be read for ever. Anything but
// a regular file is refused in words.
package localfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrNotRegular means a path names something other than a regular file:
// a named pipe, a device, a socket or a directory.
var ErrNotRegular = errors.New("is not a regular file")

// Open opens the regular file at path for reading, without blocking, or
// refuses it with ErrNotRegular.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	if !info.Mode().IsRegular() {
		_ = f.Close()
		return nil, fmt.Errorf("%s %w (it is %s)", path, ErrNotRegular, kind(info.Mode()))
	}
	return f, nil
}

// Read reads the regular file at path (Open), at most limit+1 bytes, so
// that the caller can tell a file past its cap. The buffer is sized from
// the file's size, so a file is held once, not grown into.
func Read(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(512)
	if info, err := f.Stat(); err == nil {
		size = max(size, min(info.Size(), limit)+1)
	}
	buf := make([]byte, 0, size)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF || int64(len(buf)) > limit {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) { // the file grew since its Stat
			buf = append(buf, 0)[:len(buf)]
		}
	}
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
