package feed

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrArchive means an OSV archive is not a readable zip, is truncated
	// or corrupt, or is over the limits: nothing of it may be stored.
	ErrArchive = errors.New("unusable feed archive")
	// ErrSchema means a file is not in the format of its kind.
	ErrSchema = errors.New("not the feed's format")
	// ErrSpoolDir means the archive could not be written to the directory
	// it is spooled to (UPCHECK_FEED_DIR): the directory is missing, not a
	// directory, not writable, or the disk is full. The feed's server is
	// not at fault and the database is not gone.
	ErrSpoolDir = errors.New("cannot write the archive to its directory")
)

// Skipped is a record, entry or row left out of a feed, with where it was
// and why, for Source health to list.
type Skipped struct {
	// ID is the record's id when it could be read (an OSV id, a CVE).
	ID string
	// Path says where it was: a JSON path ("vulnerabilities[3].cveID"),
	// a line ("line 17") or an archive entry's name.
	Path string
	// Reason is a sentence for an operator.
	Reason string
}

// MaxSkipped bounds the skipped list a reader returns; past it, one last
// entry says how many more were skipped.
const MaxSkipped = 1000

// skipList collects Skipped up to MaxSkipped.
type skipList struct {
	list []Skipped
	more int
}

func (s *skipList) add(sk Skipped) {
	if len(s.list) < MaxSkipped {
		s.list = append(s.list, sk)
		return
	}
	s.more++
}

func (s *skipList) result() []Skipped {
	if s.more > 0 {
		return append(s.list, Skipped{Reason: fmt.Sprintf("and %d more skipped, not listed", s.more)})
	}
	return s.list
}

// Feed is one configured feed.
type Feed struct {
	Kind readmodel.FeedKind
	URL  string
}

// ParseList reads UPCHECK_FEEDS: comma-separated KIND=URL pairs such as
// "osv=URL,kev=URL,epss=URL" (a comma inside a URL is written %2C). Each
// kind may appear once. osv and osv-api exclude each other: both bring the
// same OSV records, and two sources of one record would overwrite each
// other's stored state on every sync. URLs must be absolute http or https.
// An empty list configures no feed.
func ParseList(s string) ([]Feed, error) {
	var feeds []Feed
	seen := map[readmodel.FeedKind]bool{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, raw, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("feed %q: want KIND=URL, such as kev=https://mirror.example.org/kev.json", part)
		}
		kind := readmodel.FeedKind(strings.ToLower(strings.TrimSpace(k)))
		if !kind.Valid() {
			return nil, fmt.Errorf("feed %q: unknown kind %q (want osv, osv-api, kev or epss)", part, k)
		}
		if seen[kind] {
			return nil, fmt.Errorf("feed kind %s is configured twice: keep one URL", kind)
		}
		seen[kind] = true
		raw = strings.TrimSpace(raw)
		if err := checkURL(raw); err != nil {
			return nil, fmt.Errorf("feed %s: %w", kind, err)
		}
		feeds = append(feeds, Feed{Kind: kind, URL: raw})
	}
	if seen[readmodel.FeedOSV] && seen[readmodel.FeedOSVAPI] {
		return nil, errors.New("feeds osv and osv-api are both configured: they bring the same records; keep the archive (osv) or the API (osv-api)")
	}
	return feeds, nil
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http or https URL", raw)
	}
	if u.User != nil {
		// Source health and the API show a feed's URL to every viewer.
		return fmt.Errorf("%q carries credentials: a feed's URL is shown to every viewer, so it may not hold a user or password", u.Redacted())
	}
	return nil
}
