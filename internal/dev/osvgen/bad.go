package osvgen

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteZipBomb writes a zip whose one entry, name, inflates to size bytes
// of zeros from about a thousandth of that: the archive a reader must cap.
// The sizes in the headers are true, so only a reader that counts what it
// inflates (or believes the headers) stops it.
func WriteZipBomb(w io.Writer, name string, size int64) error {
	zw := NewZipWriter(w)
	f, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
	if err != nil {
		return err
	}
	zeros := make([]byte, 1<<20)
	for left := size; left > 0; {
		n := min(left, int64(len(zeros)))
		if _, err := f.Write(zeros[:n]); err != nil {
			return err
		}
		left -= n
	}
	return zw.Close()
}

// LongRecord is a valid GHSA record of pkg whose details are padded to
// make the record about size bytes long: the record a reader must refuse
// by its length, not by its form.
func LongRecord(id, pkg string, size int) []byte {
	rec := Record(id, pkg, KindVuln, "0", "1.0.0")
	var r map[string]any
	if err := json.Unmarshal(rec, &r); err != nil {
		panic(fmt.Sprintf("osvgen: a record of our own does not parse: %v", err)) // cannot happen
	}
	const again = "The same sentence again, to make the record long. "
	r["details"] = fmt.Sprint(r["details"]) + strings.Repeat(again, max(0, size-len(rec))/len(again)+1)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		panic(fmt.Sprintf("osvgen: %v", err))
	}
	return b.Bytes()
}
