// Package feedserver is the one server of advisory feeds for the tests,
// the demo and the bench (internal/testing/feedserver starts it on an
// httptest server for a test; the demo serves it below its FeedsPath): an
// http.Handler serving an OSV ecosystem archive at /osv/all.zip with its
// /osv/modified_id.csv (switchable) and each record at /osv/{ID}.json, a
// known-exploited catalogue at /kev.json, an EPSS file at /epss.csv.gz,
// and an OSV-compatible API under /api (POST /api/v1/querybatch, GET
// /api/v1/vulns/{id}).
//
// The caller sets and replaces the content (SetRecords, SetKEV, SetEPSS,
// or any bytes with SetRaw); every answer has a strong ETag and a
// Last-Modified, and a conditional request for what has not changed gets
// 304. Paths can fail, be served slowly (flushing as it goes) or be held
// until the caller lets them go; requests are counted per path. With a
// directory, archives are built into files there and streamed from them,
// never held in memory, so a test can serve hundreds of thousands of
// records; without one (the demo's handful) they are kept in memory.
//
// What a request gets is what the path held when it arrived.
package feedserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// The paths the server answers, below its URL.
const (
	ArchivePath  = "/osv/all.zip"
	ModifiedPath = "/osv/modified_id.csv"
	KEVPath      = "/kev.json"
	EPSSPath     = "/epss.csv.gz"
	APIPath      = "/api" // an OSV-compatible API: APIPath + "/v1/querybatch", APIPath + "/v1/vulns/{id}"
)

// RecordPath is where the record id is served on its own.
func RecordPath(id string) string { return "/osv/" + id + ".json" }

// Server is the feeds' handler and what it serves.
type Server struct {
	dir string // "": archives in memory

	mu          sync.Mutex
	files       map[string]*content // archive, csv, KEV and EPSS by path
	raws        map[string]*content // what the test set with SetRaw, over everything else
	recs        *recordSet          // what SetRecords set last
	modifiedCSV bool
	pageSize    int
	fails       map[string]int
	slows       map[string]int
	holds       map[string]*hold
	all         []*hold
	requests    map[string]int
	notModified map[string]int
	generation  int
	clock       time.Time // the last Last-Modified given: each change gets a later one
}

// content is one answer: bytes, or a section of a file; its strong ETag
// and Last-Modified.
type content struct {
	body      []byte
	file      string
	off, size int64
	etag      string
	modTime   time.Time
	ctype     string
}

// New returns a server with nothing set (every feed path answers 404, the
// API knows no record), modified_id.csv on and no API paging; SetRecords
// writes its archives under dir (which the caller removes), or keeps them
// in memory when dir is "".
func New(dir string) *Server {
	return &Server{dir: dir, files: map[string]*content{}, raws: map[string]*content{}, recs: &recordSet{},
		modifiedCSV: true, fails: map[string]int{}, slows: map[string]int{}, holds: map[string]*hold{},
		requests: map[string]int{}, notModified: map[string]int{}}
}

// Close lets every held request go (Hold), for a server being shut down.
func (s *Server) Close() {
	s.mu.Lock()
	all := s.all
	s.mu.Unlock()
	for _, h := range all {
		h.release()
	}
}

// ServeHTTP answers the feeds' paths.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.serve(w, r) }

// SetRaw makes path answer body, whatever was set there (a truncated zip,
// a KEV file of another schema, a record that is not JSON); a nil body
// takes the override away.
func (s *Server) SetRaw(path string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if body == nil {
		delete(s.raws, path)
		return
	}
	s.raws[path] = &content{body: body, etag: etagOf(body), modTime: s.tick(), ctype: contentType(path)}
}

// ModifiedCSV switches /osv/modified_id.csv on (the default) or off (404),
// for the server that has no delta list beside its archive.
func (s *Server) ModifiedCSV(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.modifiedCSV = on
}

// Fail makes path answer status; 0 makes it answer again.
func (s *Server) Fail(path string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status == 0 {
		delete(s.fails, path)
		return
	}
	s.fails[path] = status
}

// Slow makes path's body go out at bytesPerSecond, flushed as it goes (the
// headers at once): a download a test can kill midway. 0 makes it fast
// again.
func (s *Server) Slow(path string, bytesPerSecond int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if bytesPerSecond <= 0 {
		delete(s.slows, path)
		return
	}
	s.slows[path] = bytesPerSecond
}

// Hold makes the requests to path that arrive from now on wait until
// release is called (or their client gives up); arrived is closed when the
// first of them arrives. release may be called more than once.
func (s *Server) Hold(path string) (release func(), arrived <-chan struct{}) {
	h := &hold{released: make(chan struct{}), arrived: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holds[path] = h
	s.all = append(s.all, h)
	return func() {
		s.mu.Lock()
		if s.holds[path] == h {
			delete(s.holds, path)
		}
		s.mu.Unlock()
		h.release()
	}, h.arrived
}

type hold struct {
	released, arrived chan struct{}
	releaseOnce       sync.Once
	arriveOnce        sync.Once
}

func (h *hold) release() { h.releaseOnce.Do(func() { close(h.released) }) }
func (h *hold) arrive()  { h.arriveOnce.Do(func() { close(h.arrived) }) }

// Requests is how many requests to path have arrived.
func (s *Server) Requests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[path]
}

// NotModified is how many requests to path were answered 304.
func (s *Server) NotModified(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notModified[path]
}

// tick is the Last-Modified of a change made now: later than every one
// given before, so that If-Modified-Since never mistakes two contents set
// in the same second for one. Called with s.mu held.
func (s *Server) tick() time.Time {
	now := time.Now().UTC().Truncate(time.Second)
	if !now.After(s.clock) {
		now = s.clock.Add(time.Second)
	}
	s.clock = now
	return now
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	s.mu.Lock()
	s.requests[path]++
	c := s.lookup(path)
	recs, pageSize := s.recs, s.pageSize
	h, status, rate := s.holds[path], s.fails[path], s.slows[path]
	s.mu.Unlock()
	if h != nil {
		h.arrive()
		select {
		case <-h.released:
		case <-r.Context().Done():
			return
		}
	}
	if status != 0 {
		http.Error(w, http.StatusText(status), status)
		return
	}
	var out http.ResponseWriter = &counting{ResponseWriter: w, s: s, path: path}
	if rate > 0 {
		out = &slowWriter{ResponseWriter: out, ctx: r.Context(), rc: http.NewResponseController(w), rate: rate}
	}
	switch {
	case c != nil:
		s.serveContent(out, r, c)
	case strings.HasPrefix(path, APIPath+"/"):
		s.api(out, r, recs, pageSize)
	default:
		http.NotFound(out, r)
	}
}

// lookup is what path answers, nil for nothing. Called with s.mu held.
func (s *Server) lookup(path string) *content {
	if c := s.raws[path]; c != nil {
		return c
	}
	if c := s.files[path]; c != nil {
		if path == ModifiedPath && !s.modifiedCSV {
			return nil
		}
		return c
	}
	if id, ok := strings.CutPrefix(path, "/osv/"); ok && strings.HasSuffix(id, ".json") {
		return s.recs.byID[strings.TrimSuffix(id, ".json")]
	}
	return nil
}

// serveContent answers c with its ETag and Last-Modified, 304 to a
// conditional request that names them, ranges when asked.
func (s *Server) serveContent(w http.ResponseWriter, r *http.Request, c *content) {
	w.Header().Set("ETag", c.etag)
	w.Header().Set("Content-Type", c.ctype)
	if c.body != nil {
		http.ServeContent(w, r, "", c.modTime, bytes.NewReader(c.body))
		return
	}
	f, err := os.Open(c.file)
	if err != nil {
		http.Error(w, "feed server: "+err.Error(), http.StatusInternalServerError)
		return
	}
	defer f.Close()
	http.ServeContent(w, r, "", c.modTime, io.NewSectionReader(f, c.off, c.size))
}

// counting counts the 304 answers.
type counting struct {
	http.ResponseWriter
	s    *Server
	path string
}

func (c *counting) WriteHeader(status int) {
	if status == http.StatusNotModified {
		c.s.mu.Lock()
		c.s.notModified[c.path]++
		c.s.mu.Unlock()
	}
	c.ResponseWriter.WriteHeader(status)
}

func etagOf(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

func contentType(path string) string {
	switch {
	case strings.HasSuffix(path, ".zip"):
		return "application/zip"
	case strings.HasSuffix(path, ".json"):
		return "application/json"
	case strings.HasSuffix(path, ".gz"):
		return "application/gzip"
	case strings.HasSuffix(path, ".csv"):
		return "text/csv"
	}
	return "application/octet-stream"
}
