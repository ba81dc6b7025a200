package web_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/metrics"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// The exposition reads the real summary and feeds: one malicious and one
// exploited component, the osv feed interrupted, epss failing, kev fine,
// with the last successes as stored.
func TestIntelMetricsFromTheDatabase(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	b.intelFacts()
	b.feedRows()
	m := metrics.New(b.store.SummaryReader(store.LocalSite, readmodel.DevSeparate), metrics.WithFeeds(b.store.Feeds))
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	out := rec.Body.String()
	for _, want := range []string{
		"upcheck_known_exploited_components 1\n", "upcheck_malicious_components 1\n",
		`upcheck_feed_interrupted{kind="osv"} 1` + "\n", `upcheck_feed_interrupted{kind="kev"} 0` + "\n",
		`upcheck_feed_failing{kind="epss"} 1` + "\n", `upcheck_feed_failing{kind="kev"} 0` + "\n",
		`upcheck_feed_last_success_timestamp_seconds{kind="kev"} 1.796094e+09` + "\n",
		`upcheck_feed_last_success_timestamp_seconds{kind="epss"} 0` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
}
