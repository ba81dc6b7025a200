package feedserver

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"iter"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/upcheck/upcheck/internal/dev/osvgen"
)

// recordSet is the records SetRecords set: each record's bytes (a section
// of one file) and what the API matches on.
type recordSet struct {
	byID  map[string]*content
	index []indexed
}

// indexed is what the API reads of a record.
type indexed struct {
	id        string
	modified  time.Time
	withdrawn bool
	affected  []affectedPkg
}

type affectedPkg struct {
	Package struct {
		Ecosystem string `json:"ecosystem"`
		Name      string `json:"name"`
	} `json:"package"`
	Ranges []struct {
		Type   string `json:"type"`
		Events []struct {
			Introduced   string `json:"introduced"`
			Fixed        string `json:"fixed"`
			LastAffected string `json:"last_affected"`
		} `json:"events"`
	} `json:"ranges"`
	Versions []string `json:"versions"`
}

// SetRecords replaces the records: the archive at ArchivePath (one ID.json
// entry per record, deflated, in the order given), modified_id.csv (newest
// first; a record with no readable modified time is listed as changed
// now), each record at RecordPath(id), and what the API answers. Records
// are written to the server's directory as they come (when it has one), so recs may be large; bytes
// that are not a record (for bad-input tests) are served as given and
// matched by nothing.
func (s *Server) SetRecords(recs iter.Seq2[string, []byte]) error {
	s.mu.Lock()
	s.generation++
	gen := s.generation
	now := s.tick()
	s.mu.Unlock()
	dir := ""
	if s.dir != "" {
		dir = filepath.Join(s.dir, fmt.Sprintf("records-%d", gen))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("feed server: %w", err)
		}
	}
	set, modified, zipFile, err := writeRecords(dir, recs, now)
	if err != nil {
		return fmt.Errorf("feed server: %w", err)
	}
	var csv bytes.Buffer
	if err := osvgen.ModifiedIDs(&csv, modified); err != nil {
		return fmt.Errorf("feed server: modified_id.csv: %w", err)
	}
	csvFile := &content{body: csv.Bytes(), etag: etagOf(csv.Bytes()), modTime: now, ctype: "text/csv"}
	if dir != "" {
		if csvFile, err = writeFile(filepath.Join(dir, "modified_id.csv"), csv.Bytes(), now, "text/csv"); err != nil {
			return fmt.Errorf("feed server: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = set
	s.files[ArchivePath] = zipFile
	s.files[ModifiedPath] = csvFile
	return nil
}

// writeRecords writes recs to dir's records file and archive, hashing as
// it goes; with no dir, it keeps both in memory.
func writeRecords(dir string, recs iter.Seq2[string, []byte], now time.Time) (*recordSet, []osvgen.Modified, *content, error) {
	var dataOut, zipOut io.Writer
	var data, zf *os.File
	var zipMem bytes.Buffer
	zipPath := ""
	if dir == "" {
		dataOut, zipOut = io.Discard, &zipMem
	} else {
		var err error
		if data, err = os.Create(filepath.Join(dir, "records.dat")); err != nil {
			return nil, nil, nil, err
		}
		defer data.Close()
		zipPath = filepath.Join(dir, "all.zip")
		if zf, err = os.Create(zipPath); err != nil {
			return nil, nil, nil, err
		}
		defer zf.Close()
		dataOut, zipOut = data, zf
	}
	dw := bufio.NewWriterSize(dataOut, 1<<20)
	zipHash := sha256.New()
	zw := osvgen.NewZipWriter(io.MultiWriter(zipOut, zipHash))
	set := &recordSet{byID: map[string]*content{}}
	var modified []osvgen.Modified
	var off int64
	for id, body := range recs {
		if _, err := dw.Write(body); err != nil {
			return nil, nil, nil, err
		}
		c := &content{off: off, size: int64(len(body)), etag: etagOf(body), modTime: now, ctype: "application/json"}
		if data != nil {
			c.file = data.Name()
		} else {
			c.body = bytes.Clone(body)
		}
		set.byID[id] = c
		off += int64(len(body))
		e, err := zw.CreateHeader(&zip.FileHeader{Name: id + ".json", Method: zip.Deflate})
		if err == nil {
			_, err = e.Write(body)
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("archive entry %s: %w", id, err)
		}
		rec := index(id, body)
		if rec.modified.IsZero() {
			rec.modified = now
		} else if rec.affected != nil {
			set.index = append(set.index, rec)
		}
		modified = append(modified, osvgen.Modified{ID: id, Time: rec.modified})
	}
	if err := zw.Close(); err != nil {
		return nil, nil, nil, err
	}
	if err := dw.Flush(); err != nil {
		return nil, nil, nil, err
	}
	if zf == nil {
		return set, modified, &content{body: zipMem.Bytes(), etag: sum(zipHash), modTime: now, ctype: "application/zip"}, nil
	}
	size, err := zf.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, nil, nil, err
	}
	return set, modified, &content{file: zipPath, size: size, etag: sum(zipHash), modTime: now, ctype: "application/zip"}, nil
}

// index reads what the API matches on; a record it cannot read has no
// modified time and matches nothing.
func index(id string, body []byte) indexed {
	var r struct {
		Modified  time.Time     `json:"modified"`
		Withdrawn string        `json:"withdrawn"`
		Affected  []affectedPkg `json:"affected"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return indexed{id: id}
	}
	return indexed{id: id, modified: r.Modified, withdrawn: r.Withdrawn != "", affected: r.Affected}
}

func sum(h hash.Hash) string { return `"` + hex.EncodeToString(h.Sum(nil)) + `"` }

func writeFile(path string, body []byte, now time.Time, ctype string) (*content, error) {
	if err := os.WriteFile(path, body, 0o644); err != nil {
		return nil, err
	}
	return &content{file: path, size: int64(len(body)), etag: etagOf(body), modTime: now, ctype: ctype}, nil
}

// SetKEV serves c at KEVPath.
func (s *Server) SetKEV(c osvgen.KEVCatalog) error {
	var b bytes.Buffer
	if err := osvgen.WriteKEV(&b, c); err != nil {
		return fmt.Errorf("feed server: KEV: %w", err)
	}
	s.setGenerated(KEVPath, b.Bytes())
	return nil
}

// SetEPSS serves f, gzipped, at EPSSPath.
func (s *Server) SetEPSS(f osvgen.EPSSFile) error {
	var b bytes.Buffer
	if err := osvgen.WriteEPSS(&b, f); err != nil {
		return fmt.Errorf("feed server: EPSS: %w", err)
	}
	s.setGenerated(EPSSPath, b.Bytes())
	return nil
}

// setGenerated serves body at path (under raw bytes the test set there).
func (s *Server) setGenerated(path string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = &content{body: body, etag: etagOf(body), modTime: s.tick(), ctype: contentType(path)}
}

// slowWriter sends the body in slices, one every tenth of a second,
// flushing each, and gives up when the client has gone.
type slowWriter struct {
	http.ResponseWriter
	ctx  context.Context
	rc   *http.ResponseController
	rate int
}

// WriteHeader sends the headers at once.
func (w *slowWriter) WriteHeader(status int) {
	w.ResponseWriter.WriteHeader(status)
	w.rc.Flush() //nolint:errcheck // see Write
}

func (w *slowWriter) Write(p []byte) (int, error) {
	slice := max(1, w.rate/10)
	written := 0
	for len(p) > 0 {
		n := min(slice, len(p))
		m, err := w.ResponseWriter.Write(p[:n])
		written += m
		if err != nil {
			return written, err
		}
		w.rc.Flush() //nolint:errcheck // a writer that cannot flush still sends, later
		p = p[n:]
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-t.C:
		case <-w.ctx.Done():
			t.Stop()
			return written, context.Cause(w.ctx)
		}
	}
	return written, nil
}
