package readmodel

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// FeedKind is the kind of an advisory feed (feeds.kind, UPCHECK_FEEDS).
type FeedKind string

const (
	// FeedOSV is an OSV ecosystem archive: a zip of OSV records, with its
	// modified_id.csv beside it for deltas when the server has one.
	FeedOSV FeedKind = "osv"
	// FeedOSVAPI is an OSV-compatible API, queried with the installed
	// packages.
	FeedOSVAPI FeedKind = "osv-api"
	// FeedKEV is the Known Exploited Vulnerabilities catalogue (JSON).
	FeedKEV FeedKind = "kev"
	// FeedEPSS is the daily EPSS scores (CSV, gzipped).
	FeedEPSS FeedKind = "epss"
)

// AllFeedKinds are the feed kinds, in the order Source health lists them.
func AllFeedKinds() []FeedKind { return []FeedKind{FeedOSV, FeedOSVAPI, FeedKEV, FeedEPSS} }

// NamesMalware reports whether a feed of kind k can name malicious
// packages (OSV MAL- records): osv and osv-api. Until one of them has
// completed a sync (Summary.MalwareReadAt, upcheck_malware_read_at in SQL)
// nothing is known of malicious packages, and no count of them is given.
func (k FeedKind) NamesMalware() bool { return k == FeedOSV || k == FeedOSVAPI }

// NamesExploited reports whether a feed of kind k can say an advisory is
// exploited in the wild: kev, the KEV catalogue. Until one has completed a
// sync (Summary.ExploitedReadAt, upcheck_exploited_read_at in SQL) nothing
// is known of exploited advisories, and no count of them is given.
func (k FeedKind) NamesExploited() bool { return k == FeedKEV }

// Valid reports whether k is one of AllFeedKinds.
func (k FeedKind) Valid() bool { return slices.Contains(AllFeedKinds(), k) }

// Title is the kind in words, for headings.
func (k FeedKind) Title() string {
	switch k {
	case FeedOSV:
		return "OSV advisories (archive)"
	case FeedOSVAPI:
		return "OSV advisories (API)"
	case FeedKEV:
		return "Known exploited vulnerabilities (KEV)"
	case FeedEPSS:
		return "Exploit prediction scores (EPSS)"
	}
	return string(k)
}

// FeedSyncStatus is how a feed sync ended (feed_syncs.status).
type FeedSyncStatus string

const (
	FeedSyncRunning     FeedSyncStatus = "running"
	FeedSyncCompleted   FeedSyncStatus = "completed"
	FeedSyncNotModified FeedSyncStatus = "not_modified"
	FeedSyncFailed      FeedSyncStatus = "failed"
	// FeedSyncInterrupted: the sync's process died, or lost its lease or
	// its database, before it finished; recorded by the next sync.
	FeedSyncInterrupted FeedSyncStatus = "interrupted"
)

// The kinds of a feed's failure that only feeds have (feeds.last_error_kind);
// a fetch failure keeps its ErrorKind.
const (
	// ErrorInterrupted: the last sync was interrupted before it finished;
	// its argument is when it started (FailureArgs.StartedAt).
	ErrorInterrupted ErrorKind = "interrupted"
	// ErrorSchema: the file is not of the feed's kind (another schema,
	// missing columns); its argument says what is missing
	// (FailureArgs.Problem).
	ErrorSchema ErrorKind = "schema"
	// ErrorArchive: the OSV archive is not a readable zip, or is larger
	// uncompressed than upcheck reads; nothing of it was stored.
	ErrorArchive ErrorKind = "archive"
	// ErrorFeedDir: the archive could not be written to UPCHECK_FEED_DIR
	// (missing, not a directory, not writable, the disk full); its
	// argument is the system's reason (FailureArgs.Problem).
	ErrorFeedDir ErrorKind = "feed_dir"
	// ErrorTooManyRecords: an osv-api feed's API named more records new
	// or changed than one sync fetches one by one; the first ones were
	// stored. Its arguments are how many it named and the cap
	// (FailureArgs.Named, Max: TooManyRecordsArgs).
	ErrorTooManyRecords ErrorKind = "too_many_records"
)

// TooManyRecordsArgs are ErrorTooManyRecords' arguments: how many records
// the API named and how many a sync fetches.
func TooManyRecordsArgs(named, max int) FailureArgs { return FailureArgs{Named: named, Max: max} }

// MaxSkippedListed is how many skipped records a feed keeps listed (the
// count says how many there were in all).
const MaxSkippedListed = 100

// SkippedRecord is a feed record skipped as malformed: its id (or line),
// where in it the problem is (a JSON path), and why.
type SkippedRecord struct {
	ID     string `json:"id"`
	Path   string `json:"path,omitempty"`
	Reason string `json:"reason"`
}

// FeedRow is one configured feed as Source health and the API list it.
type FeedRow struct {
	Kind FeedKind
	URL  string
	// Records is how many records (OSV), entries (KEV) or scores (EPSS) it
	// holds now.
	Records int
	// LastSuccessAt is its last complete sync, LastChangeAt the last that
	// changed what is stored, LastAttemptAt the last that started; nil:
	// never.
	LastSuccessAt, LastChangeAt, LastAttemptAt *time.Time
	// LastError is the technical text of the last failure, LastErrorKind
	// (an ErrorKind) and LastErrorArgs word it (FeedProblemSentence); "":
	// the last sync succeeded.
	LastError, LastErrorKind string
	LastErrorArgs            FailureArgs
	ConsecutiveFailures      int
	// InterruptedAt is the start of a sync that was interrupted before it
	// finished, until a sync succeeds; nil: none.
	InterruptedAt *time.Time
	// Skipped lists the records the last sync skipped as malformed (at
	// most MaxSkippedListed), SkippedCount how many in all.
	Skipped      []SkippedRecord
	SkippedCount int
	// Stale: no sync succeeded for FeedStaleAge (or never since the feed
	// was configured that long ago). Failing: the last sync failed
	// (upcheck_failing, as for sources: the one definition).
	Stale, Failing bool
}

// FeedSyncRow is one sync in the feeds' history (feed_syncs): filled by
// store, listed by the history page. Error is the technical text of a
// failed sync, for the log and the API, never shown on a page.
type FeedSyncRow struct {
	ID         int64
	Kind       FeedKind
	Trigger    string
	StartedAt  time.Time
	FinishedAt *time.Time
	Status     FeedSyncStatus
	// Written, Unchanged and Skipped count the records.
	Written, Unchanged, Skipped int
	Error                       string
}

// FeedStaleAge is how long a feed may go without a successful sync before
// it is stale: two daily syncs missed (upcheck_feed_stale_age in SQL).
const FeedStaleAge = 48 * time.Hour

// InterruptedSentence is the words of an interrupted sync, on Source
// health, in the history and in the feed's last error.
func InterruptedSentence(startedAt time.Time) string {
	return fmt.Sprintf("The sync started %s was interrupted before it finished.",
		TimeText(startedAt))
}

// FeedProblemSentence words a feed's last failure: the feed's own kinds,
// then a fetch failure in the words of a feed's server.
func FeedProblemSentence(kind string, args FailureArgs) string {
	switch ErrorKind(kind) {
	case ErrorInterrupted:
		if args.StartedAt != nil {
			return InterruptedSentence(*args.StartedAt)
		}
		return "The last sync was interrupted before it finished."
	case ErrorSchema:
		if args.Problem != "" {
			return "The file is not of this feed's kind (" + args.Problem + "), so nothing of it was stored."
		}
		return "The file is not of this feed's kind, so nothing of it was stored."
	case ErrorArchive:
		if args.Problem != "" {
			return "The archive could not be read (" + args.Problem + "), so nothing of it was stored."
		}
		return "The archive could not be read, so nothing of it was stored."
	case ErrorFeedDir:
		if args.Problem != "" {
			return "upcheck cannot write the archive to UPCHECK_FEED_DIR: " + args.Problem + ". Nothing of it was stored."
		}
		return "upcheck cannot write the archive to UPCHECK_FEED_DIR. Nothing of it was stored."
	case ErrorTooManyRecords:
		if named, max := args.Named, args.Max; max > 0 {
			return fmt.Sprintf("The API named %s advisories new or changed, more than the %s one sync fetches one by one: "+
				"the first %s were stored, and the next sync fetches more. An osv archive feed reads every advisory at once.",
				grouped(named), grouped(max), grouped(max))
		}
		return "The API named more advisories than one sync fetches one by one: the next sync fetches more."
	case ErrorHTTPStatus:
		if code := args.Status; code != 0 {
			return fmt.Sprintf("The feed's server answered %d %s.", code, http.StatusText(code))
		}
		return "The feed's server answered with an error."
	case ErrorConnect, ErrorDNS, ErrorTLS:
		return "The feed's server could not be reached (" + ProblemSentence(kind, args) + ")"
	case ErrorTimeout:
		return "The feed's server did not answer in time."
	case ErrorTooLarge:
		return "The feed's file is larger than upcheck reads, so it was not read."
	case ErrorMalformed:
		if args.Problem != "" {
			return "The feed's file is malformed (" + args.Problem + "), so nothing of it was stored."
		}
		return "The feed's file is malformed, so nothing of it was stored."
	case ErrorPrivateAddress, ErrorRedirects, ErrorBadURL:
		return ProblemSentence(kind, args)
	}
	return "The last sync of this feed failed."
}

// The words of the feeds' two most urgent facts, on the pages and in the
// notifications alike.
const (
	// MalwareWords: an open advisory says the installed package is
	// malicious.
	MalwareWords = "known malicious package: remove it"
	// ExploitedWords: an open advisory is in the KEV catalogue.
	ExploitedWords = "exploited in the wild"
	// MalwareTitle: an open advisory says the installed package is
	// malicious, and a later release is outside every such advisory
	// (NotAffectedText says which).
	MalwareTitle = "known malicious package"
)

// NotAffectedText is the way out of an advisory that names no fixed
// version while a later release falls outside it (its cleared_by, by
// OSV's rules: a versions list, range events): "4.4.3 is not affected:
// update to it".
func NotAffectedText(version string) string {
	return version + " is not affected: update to it"
}

// EPSSWords is "EPSS 94.3 % · 99th percentile" for a score and its
// percentile (0 to 1), on the pages and in the notifications alike.
func EPSSWords(score, percentile float64) string {
	return "EPSS " + percentText(score) + " % · " + Ordinal(int(percentile*100)) + " percentile"
}

// percentText is a probability in percent: one decimal, two below 0.1 %
// (most scores are that small, and "0.0 %" would say none).
func percentText(p float64) string {
	if p*100 < 0.1 {
		return strconv.FormatFloat(p*100, 'f', 2, 64)
	}
	return strconv.FormatFloat(p*100, 'f', 1, 64)
}

// Ordinal is 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st…
func Ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}

// grouped is n with its thousands grouped: 20,000.
func grouped(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + grouped(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
