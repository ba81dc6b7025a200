package feed

import (
	"bytes"
	"encoding/binary"
	"io"
)

// Signatures and sizes of the zip records read by declaredEntries
// (APPNOTE.TXT 4.3.14 to 4.3.16).
const (
	eocdLen        = 22
	eocdMaxComment = 65535
	zip64LocLen    = 20
	zip64EOCDLen   = 56
)

var (
	eocdSig     = []byte("PK\x05\x06")
	zip64LocSig = []byte("PK\x06\x07")
	zip64Sig    = []byte("PK\x06\x06")
)

// declaredEntries reads how many entries the zip's end of central directory
// record (or its zip64 form) declares, without reading the directory:
// archive/zip builds a struct for every entry before it returns, so an
// archive declaring millions of empty entries must be refused before
// zip.NewReader is called. ok is false when the record cannot be found;
// zip.NewReader then says what is wrong.
func declaredEntries(r io.ReaderAt, size int64) (n uint64, ok bool) {
	tail := min(size, eocdLen+eocdMaxComment)
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil && err != io.EOF {
		return 0, false
	}
	at := bytes.LastIndex(buf, eocdSig)
	if at < 0 || len(buf)-at < eocdLen {
		return 0, false
	}
	eocd := buf[at:]
	if total := binary.LittleEndian.Uint16(eocd[10:12]); total != 0xFFFF {
		return uint64(total), true
	}
	// A zip64 archive: the locator sits just before the record.
	locAt := size - tail + int64(at) - zip64LocLen
	if locAt < 0 {
		return 0, false
	}
	loc := make([]byte, zip64LocLen)
	if _, err := r.ReadAt(loc, locAt); err != nil || !bytes.Equal(loc[:4], zip64LocSig) {
		return 0, false
	}
	off := binary.LittleEndian.Uint64(loc[8:16])
	if off > uint64(size-zip64EOCDLen) {
		return 0, false
	}
	rec := make([]byte, zip64EOCDLen)
	if _, err := r.ReadAt(rec, int64(off)); err != nil || !bytes.Equal(rec[:4], zip64Sig) {
		return 0, false
	}
	return binary.LittleEndian.Uint64(rec[32:40]), true
}
