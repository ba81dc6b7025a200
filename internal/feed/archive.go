package feed

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/upcheck/upcheck/internal/localfile"
)

// Limits bound what an OSV archive may cost.
type Limits struct {
	// MaxArchive caps the compressed file, as downloaded.
	MaxArchive int64
	// MaxUncompressed caps the sum of the entries' declared sizes.
	MaxUncompressed int64
	// MaxRecord caps one entry: a larger one is never read.
	MaxRecord int64
	// MaxEntries caps the number of entries.
	MaxEntries int
}

// DefaultLimits fits the largest ecosystem archives published today (npm's
// is of the order of 200,000 records and a few hundred megabytes
// uncompressed) with room to grow.
func DefaultLimits() Limits {
	return Limits{
		MaxArchive:      1 << 30, // 1 GiB
		MaxUncompressed: 8 << 30, // 8 GiB
		MaxRecord:       1 << 20, // 1 MiB: real records are a few KiB
		MaxEntries:      2_000_000,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxArchive <= 0 {
		l.MaxArchive = d.MaxArchive
	}
	if l.MaxUncompressed <= 0 {
		l.MaxUncompressed = d.MaxUncompressed
	}
	if l.MaxRecord <= 0 {
		l.MaxRecord = d.MaxRecord
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = d.MaxEntries
	}
	return l
}

// Archive is an OSV archive opened from a file, read entry by entry. It
// is not safe for concurrent use.
type Archive struct {
	f       *os.File
	zr      *zip.Reader
	lim     Limits
	records int
	// buf is the one copy buffer of every entry read: an archive of
	// 200,000 records would otherwise allocate 200,000 of them.
	buf []byte
}

// Entry is one record of an archive.
type Entry struct {
	// Index is the entry's position in the zip, for [Archive.Read].
	Index int
	// Name is the entry's name, "GHSA-xxxx-xxxx-xxxx.json".
	Name string
	// Size is the declared uncompressed size.
	Size int64
	// Hash is the SHA-256 of the entry's exact bytes (zero when TooLarge).
	Hash [32]byte
	// TooLarge: Size is over Limits.MaxRecord; the entry was never read
	// and the caller lists it as skipped.
	TooLarge bool
}

// OpenArchive opens the zip at path under lim (zero fields take
// [DefaultLimits]). It fails with [ErrArchive] when the file is not a zip or
// is truncated, has more than MaxEntries entries, or declares more than
// MaxUncompressed bytes in all: a zip bomb is refused from its central
// directory, before anything is decompressed.
func OpenArchive(path string, lim Limits) (*Archive, error) {
	lim = lim.withDefaults()
	f, err := localfile.Open(path) // an imported file's path is the operator's
	if err != nil {
		return nil, fmt.Errorf("open feed archive: %w", err)
	}
	a, err := openArchive(f, lim)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return a, nil
}

func openArchive(f *os.File, lim Limits) (*Archive, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("open feed archive: %w", err)
	}
	if st.Size() > lim.MaxArchive {
		return nil, fmt.Errorf("%w: the archive is %d bytes, more than the limit of %d", ErrArchive, st.Size(), lim.MaxArchive)
	}
	if n, ok := declaredEntries(f, st.Size()); ok && n > uint64(lim.MaxEntries) {
		return nil, fmt.Errorf("%w: the archive declares %d entries, more than the limit of %d", ErrArchive, n, lim.MaxEntries)
	}
	zr, err := zip.NewReader(f, st.Size())
	// ErrInsecurePath comes with a usable reader: entry names are never
	// used as paths here.
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("%w: not a zip archive, or truncated: %v", ErrArchive, err)
	}
	if n := len(zr.File); n > lim.MaxEntries {
		return nil, fmt.Errorf("%w: %d entries, more than the limit of %d", ErrArchive, n, lim.MaxEntries)
	}
	var total uint64
	records := 0
	for _, zf := range zr.File {
		if total += zf.UncompressedSize64; total > uint64(lim.MaxUncompressed) || total < zf.UncompressedSize64 {
			return nil, fmt.Errorf("%w: the entries declare more than %d bytes uncompressed in all (a zip bomb, or a limit to raise)",
				ErrArchive, lim.MaxUncompressed)
		}
		if isRecord(zf) {
			records++
		}
	}
	return &Archive{f: f, zr: zr, lim: lim, records: records}, nil
}

// isRecord: OSV records are the .json files; directories and anything
// else an archive carries are ignored.
func isRecord(zf *zip.File) bool {
	return !zf.FileInfo().IsDir() && !strings.HasSuffix(zf.Name, "/") &&
		strings.HasSuffix(strings.ToLower(zf.Name), ".json")
}

// Len is the number of records (.json entries) in the archive.
func (a *Archive) Len() int { return a.records }

// Close closes the file.
func (a *Archive) Close() error { return a.f.Close() }

func (a *Archive) entry(i int) Entry {
	zf := a.zr.File[i]
	size := int64(math.MaxInt64)
	if zf.UncompressedSize64 <= math.MaxInt64 {
		size = int64(zf.UncompressedSize64)
	}
	return Entry{Index: i, Name: zf.Name, Size: size, TooLarge: size > a.lim.MaxRecord}
}

// Scan is the first pass: it calls fn for every record in archive order,
// having read it fully and hashed it (TooLarge entries are not read). A
// corrupt entry (bad CRC, bad compressed data, more bytes than it declares,
// fewer) ends the scan with [ErrArchive], so the caller knows the archive is
// malformed before storing anything; an error from fn ends it too and is
// returned as it is.
func (a *Archive) Scan(fn func(Entry) error) error {
	for i, zf := range a.zr.File {
		if !isRecord(zf) {
			continue
		}
		e := a.entry(i)
		if !e.TooLarge {
			h := sha256.New()
			if err := a.copyEntry(h, zf, e); err != nil {
				return err
			}
			h.Sum(e.Hash[:0])
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// Read is the second pass: it calls fn with the bytes of the chosen
// records, in index order (duplicates once), each read under MaxRecord
// and hashed again. TooLarge entries are left out: Scan reported them. An
// index that is not a record is an error.
func (a *Archive) Read(indexes []int, fn func(Entry, []byte) error) error {
	idx := slices.Clone(indexes)
	slices.Sort(idx)
	idx = slices.Compact(idx)
	for _, i := range idx {
		if i < 0 || i >= len(a.zr.File) || !isRecord(a.zr.File[i]) {
			return fmt.Errorf("feed archive: entry %d is not a record of this archive", i)
		}
		e := a.entry(i)
		if e.TooLarge {
			continue
		}
		var buf bytes.Buffer
		buf.Grow(int(e.Size))
		if err := a.copyEntry(&buf, a.zr.File[i], e); err != nil {
			return err
		}
		b := buf.Bytes()
		e.Hash = sha256.Sum256(b)
		if err := fn(e, b); err != nil {
			return err
		}
	}
	return nil
}

// copyEntry copies one entry into w under MaxRecord; archive/zip checks
// the CRC and the declared size as the entry is read.
func (a *Archive) copyEntry(w io.Writer, zf *zip.File, e Entry) error {
	rc, err := zf.Open()
	if err != nil {
		return fmt.Errorf("%w: entry %q: %v", ErrArchive, zf.Name, err)
	}
	defer rc.Close()
	if a.buf == nil {
		a.buf = make([]byte, 32<<10)
	}
	n, err := io.CopyBuffer(w, io.LimitReader(rc, a.lim.MaxRecord+1), a.buf)
	switch {
	case err != nil:
		return fmt.Errorf("%w: entry %q is corrupt: %v", ErrArchive, zf.Name, err)
	case n > a.lim.MaxRecord:
		return fmt.Errorf("%w: entry %q holds more than the %d bytes allowed for a record", ErrArchive, zf.Name, a.lim.MaxRecord)
	case n != e.Size:
		return fmt.Errorf("%w: entry %q holds %d bytes but declares %d", ErrArchive, zf.Name, n, e.Size)
	}
	return nil
}
