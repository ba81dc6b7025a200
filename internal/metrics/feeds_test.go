package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// The summary's known-exploited and malicious counts are gauges, and each
// feed says whether it is interrupted or failing and when it last
// succeeded; without a database answer no feed series is invented.
func TestFeedAndIntelGauges(t *testing.T) {
	t.Parallel()
	success := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	interrupted := success.Add(time.Hour)
	feeds := []readmodel.FeedRow{
		{Kind: readmodel.FeedOSV, LastSuccessAt: &success, InterruptedAt: &interrupted, LastError: "interrupted", LastErrorKind: "interrupted", Failing: true},
		{Kind: readmodel.FeedKEV, LastSuccessAt: &success},
		{Kind: readmodel.FeedEPSS, LastError: "503", LastErrorKind: "http_status", Failing: true},
	}
	var down bool
	malicious, exploited := 1, 2
	m := New(func(context.Context) (readmodel.Summary, error) {
		return readmodel.Summary{KnownExploited: &exploited, Malicious: &malicious}, nil
	}, WithFeeds(func(context.Context) ([]readmodel.FeedRow, error) {
		if down {
			return nil, errDown
		}
		return feeds, nil
	}))
	out := scrape(t, m)
	for _, want := range []string{
		"upcheck_known_exploited_components 2\n",
		"upcheck_malicious_components 1\n",
		`upcheck_feed_interrupted{kind="osv"} 1` + "\n",
		`upcheck_feed_interrupted{kind="kev"} 0` + "\n",
		`upcheck_feed_failing{kind="osv"} 1` + "\n",
		`upcheck_feed_failing{kind="kev"} 0` + "\n",
		`upcheck_feed_failing{kind="epss"} 1` + "\n",
		`upcheck_feed_last_success_timestamp_seconds{kind="kev"} 1.796094e+09` + "\n",
		`upcheck_feed_last_success_timestamp_seconds{kind="epss"} 0` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	down = true
	if out := scrape(t, m); strings.Contains(out, "upcheck_feed_interrupted{") {
		t.Errorf("the feeds could not be read, yet a series was sent:\n%s", out)
	}
}
