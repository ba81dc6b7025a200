// Package feedserver starts the one feed server (internal/dev/feedserver)
// for a test: on a real HTTP server (httptest, loopback), closed when the
// test ends, its archives under the test's temporary directory, and a
// failed Set* failing the test. Every method of the feed server is the
// test's: SetRaw, ModifiedCSV, Fail, Slow, Hold, Requests, NotModified,
// PageSize.
package feedserver

import (
	"fmt"
	"iter"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/dev/feedserver"
	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// The paths the server answers, below its URL.
const (
	ArchivePath  = feedserver.ArchivePath
	ModifiedPath = feedserver.ModifiedPath
	KEVPath      = feedserver.KEVPath
	EPSSPath     = feedserver.EPSSPath
	APIPath      = feedserver.APIPath
)

// RecordPath is where the record id is served on its own.
func RecordPath(id string) string { return feedserver.RecordPath(id) }

// Server is a running feed server; it closes when the test ends.
type Server struct {
	*feedserver.Server
	// URL is "http://127.0.0.1:PORT", with no trailing slash.
	URL string

	t testing.TB
}

// New starts a server with nothing set (every feed path answers 404, the
// API knows no record), modified_id.csv on and no API paging.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{Server: feedserver.New(t.TempDir()), t: t}
	srv := httptest.NewServer(s.Server)
	s.URL = srv.URL
	t.Cleanup(func() {
		s.Server.Close() // held requests go, so the server can close
		srv.Close()
	})
	return s
}

// ArchiveURL, KEVURL, EPSSURL and APIURL are the feeds' addresses.
func (s *Server) ArchiveURL() string { return s.URL + ArchivePath }
func (s *Server) KEVURL() string     { return s.URL + KEVPath }
func (s *Server) EPSSURL() string    { return s.URL + EPSSPath }
func (s *Server) APIURL() string     { return s.URL + APIPath }

// Setting is an UPCHECK_FEEDS value naming this server's archive, KEV and
// EPSS feeds.
func (s *Server) Setting() string {
	return "osv=" + s.ArchiveURL() + ",kev=" + s.KEVURL() + ",epss=" + s.EPSSURL()
}

// SetRecords replaces the records (feedserver.Server.SetRecords); a
// failure fails the test.
func (s *Server) SetRecords(recs iter.Seq2[string, []byte]) {
	s.t.Helper()
	if err := s.Server.SetRecords(recs); err != nil {
		s.t.Fatal(err)
	}
}

// SetKEV serves c at KEVPath; a failure fails the test.
func (s *Server) SetKEV(c osvgen.KEVCatalog) {
	s.t.Helper()
	if err := s.Server.SetKEV(c); err != nil {
		s.t.Fatal(err)
	}
}

// SetEPSS serves f, gzipped, at EPSSPath; a failure fails the test.
func (s *Server) SetEPSS(f osvgen.EPSSFile) {
	s.t.Helper()
	if err := s.Server.SetEPSS(f); err != nil {
		s.t.Fatal(err)
	}
}

// AwaitRequests waits until n requests to path have arrived in all, and
// fails t when they have not within the time given.
func (s *Server) AwaitRequests(t testing.TB, path string, n int, within time.Duration) {
	t.Helper()
	wait.For(t, fmt.Sprintf("%d requests to %s", n, path), within, func() (bool, error) {
		if got := s.Requests(path); got < n {
			return false, wait.Notf("%d arrived", got)
		}
		return true, nil
	})
}
