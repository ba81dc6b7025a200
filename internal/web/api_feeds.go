package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/views"
)

// The advisory feeds as the API reads them (docs/feeds.md): an advisory's
// feed facts flattened where scripts read them, and GET /api/admin/feeds.

// apiAdvisory is an advisory as every answer gives it: the publisher's or
// OSV's members, then where it comes from and what the feeds say of it.
// Its members shadow the match's nested "epss" (a number here; kev keeps
// KEV's whole entry).
type apiAdvisory struct {
	release.AdvisoryMatch
	// Origins: "publisher", "osv", or both when they are one advisory.
	Origins        []string `json:"origins"`
	Malicious      bool     `json:"malicious"`
	KnownExploited bool     `json:"known_exploited"`
	// KEVDue is KEV's due date (YYYY-MM-DD), set for US federal agencies:
	// a reference; null: not in KEV, or no due date.
	KEVDue *string `json:"kev_due"`
	// EPSS is the probability of exploitation in the next 30 days and
	// EPSSPercentile its place among all scored CVEs (0 to 1); null: not
	// scored.
	EPSS           *float64 `json:"epss"`
	EPSSPercentile *float64 `json:"epss_percentile"`
}

// advisoryFacts is a match as the API gives it. An advisory evaluated
// before the feeds said where it came from is the publisher's: the
// document was all there was.
func advisoryFacts(a release.AdvisoryMatch) apiAdvisory {
	out := apiAdvisory{AdvisoryMatch: a, Origins: a.Origins, Malicious: a.Malicious, KnownExploited: a.KnownExploited}
	if len(out.Origins) == 0 {
		out.Origins = []string{"publisher"}
	}
	if a.KEV != nil {
		out.KEVDue = opt(a.KEV.DueDate)
	}
	if a.EPSS != nil {
		score, pct := a.EPSS.Score, a.EPSS.Percentile
		out.EPSS, out.EPSSPercentile = &score, &pct
	}
	return out
}

// advisoriesFacts re-encodes a stored list of matches (the catalog's open
// advisories) in the API's form; null stays null.
func advisoriesFacts(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return raw, nil
	}
	var matches []release.AdvisoryMatch
	if err := json.Unmarshal(raw, &matches); err != nil {
		return nil, fmt.Errorf("decode a component's stored advisories: %w", err)
	}
	out := make([]apiAdvisory, len(matches))
	for i, m := range matches {
		out[i] = advisoryFacts(m)
	}
	return json.Marshal(out)
}

// feedJSON is one feed as GET /api/admin/feeds lists it.
type feedJSON struct {
	Kind          string     `json:"kind"`
	Title         string     `json:"title"`
	URL           string     `json:"url"`
	Records       int        `json:"records"`
	LastSuccessAt *time.Time `json:"last_success_at"`
	LastChangeAt  *time.Time `json:"last_change_at"`
	LastAttemptAt *time.Time `json:"last_attempt_at"`
	// Problem words the last failure (readmodel.FeedProblemSentence),
	// LastErrorKind is its stable kind; null: the last sync succeeded.
	Problem             *string `json:"problem"`
	LastErrorKind       *string `json:"last_error_kind"`
	ConsecutiveFailures int     `json:"consecutive_failures"`
	// InterruptedAt is the start of a sync interrupted before it finished,
	// until a sync succeeds, and Interrupted says so in words; null: none.
	InterruptedAt *time.Time                `json:"interrupted_at"`
	Interrupted   *string                   `json:"interrupted"`
	Stale         bool                      `json:"stale"`
	Skipped       []readmodel.SkippedRecord `json:"skipped"`
	SkippedCount  int                       `json:"skipped_count"`
}

// feedBody is a feed as the API lists it to a reader who may (admin) or
// may not manage: its URL masked as a channel's target is
// (readmodel.ShownFeedURL: a mirror's token rides in the query). The
// technical text of its failure is not given: the sentence says what an
// operator can act on.
func feedBody(f readmodel.FeedRow, admin bool) feedJSON {
	out := feedJSON{Kind: string(f.Kind), Title: f.Kind.Title(), URL: readmodel.ShownFeedURL(f.URL, admin), Records: f.Records, LastSuccessAt: f.LastSuccessAt,
		LastChangeAt: f.LastChangeAt, LastAttemptAt: f.LastAttemptAt, LastErrorKind: opt(f.LastErrorKind),
		ConsecutiveFailures: f.ConsecutiveFailures, InterruptedAt: f.InterruptedAt, Stale: f.Stale,
		Skipped: f.Skipped, SkippedCount: f.SkippedCount}
	if f.Failing {
		p := readmodel.FeedProblemSentence(f.LastErrorKind, f.LastErrorArgs)
		out.Problem = &p
	}
	if f.InterruptedAt != nil {
		w := readmodel.InterruptedSentence(*f.InterruptedAt)
		out.Interrupted = &w
	}
	if out.Skipped == nil {
		out.Skipped = []readmodel.SkippedRecord{}
	}
	return out
}

// apiFeeds is GET /api/admin/feeds: the advisory feeds as Source health
// lists them.
func (s *Server) apiFeeds(c echo.Context) error {
	feeds, err := s.store.Feeds(c.Request().Context())
	if err != nil {
		return err
	}
	admin := canManage(c)
	out := make([]feedJSON, len(feeds))
	for i, f := range feeds {
		out[i] = feedBody(f, admin)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, map[string]any{"feeds": out})
}

// advisoryIntel is what the feeds say of an advisory, for its page.
func advisoryIntel(a release.AdvisoryMatch) views.AdvisoryIntel {
	out := views.AdvisoryIntel{Origins: a.Origins, Malicious: a.Malicious, KnownExploited: a.KnownExploited}
	if k := a.KEV; k != nil {
		out.KEV = &views.AdvisoryKEV{CVE: k.CVE, DateAdded: k.DateAdded, DueDate: k.DueDate, RequiredAction: k.RequiredAction, Ransomware: k.Ransomware}
	}
	if e := a.EPSS; e != nil {
		out.EPSS = &views.AdvisoryEPSS{Score: e.Score, Percentile: e.Percentile}
	}
	return out
}
