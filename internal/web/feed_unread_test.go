package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/metrics"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// No count a feed alone can give is shown before that feed was read: the
// summary's count and its read_at are null (not 0), the dashboard says
// it was not checked, the catalog's empty filter page says the feed was
// not read, /metrics has no such count; the other feed read changes
// nothing. Once the feed completed a sync, 0 is a fact and every one of
// them says it. Every answer is held to openapi.json.
//
// Malicious packages come from an OSV feed (KEV names none); components
// exploited in the wild from the KEV catalogue (OSV says nothing of
// exploitation), whose unread words link to the feeds.
func TestNoCountBeforeItsFeedIsRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                string
		feed, other         string // the kinds in feeds: the one that gives the count, and the other
		feedURL, otherURL   string
		countKey, readAtKey string // the summary's fields
		status              string // the catalog filter
		unreadShown         string
		countHidden         string
		unreadWords         string
		emptyUnread         string // the empty filter page before the feed was read
		emptyRead           string // and after
		countShown          string
		metric              string
	}{
		{
			name: "malicious", feed: "osv", other: "kev",
			feedURL: "http://127.0.0.1:9/all.zip", otherURL: "http://127.0.0.1:9/kev.json",
			countKey: "malicious", readAtKey: "malware_read_at", status: "malicious",
			unreadShown: `<li class="stat stat-neutral" data-testid="widget-malware-unread">`,
			countHidden: `<li class="stat stat-danger" hidden><a href="/admin/plugins?status=malicious">`,
			unreadWords: "Malicious packages not checked: no OSV advisory feed has been read",
			emptyUnread: "No OSV advisory feed has been read, so no package is known to be malicious or not.",
			emptyRead:   "No installed package is matched by an advisory saying it is malicious.",
			countShown:  `<span class="stat-value" data-testid="widget-malicious">0</span>`,
			metric:      "upcheck_malicious_components",
		},
		{
			name: "exploited", feed: "kev", other: "osv",
			feedURL: "http://127.0.0.1:9/kev.json", otherURL: "http://127.0.0.1:9/all.zip",
			countKey: "known_exploited", readAtKey: "exploited_read_at", status: "exploited",
			unreadShown: `<li class="stat stat-neutral" data-testid="widget-exploited-unread"><a href="/admin/sources#feeds-title">`,
			countHidden: `<li class="stat stat-danger" hidden><a href="/admin/plugins?status=exploited">`,
			unreadWords: "Exploited advisories not checked: the KEV catalogue has not been read",
			emptyUnread: "The KEV catalogue has not been read, so no advisory is known to be exploited in the wild or not.",
			emptyRead:   "No open advisory of an installed version is in the KEV catalogue of vulnerabilities exploited in the wild.",
			countShown:  `<span class="stat-value" data-testid="widget-exploited">0</span>`,
			metric:      "upcheck_known_exploited_components",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			admin := b.login("admin@example.test")
			wantStatus(t, "check", admin.postCheck(true), 200)
			read := func(when string) (count, readAt json.RawMessage, page, empty, exposition string) {
				t.Helper()
				r := admin.do("GET", "/api/admin/plugins/updates/summary", "", "", nil)
				wantStatus(t, "summary "+when, r, 200)
				var s map[string]json.RawMessage
				if err := json.Unmarshal([]byte(r.body), &s); err != nil {
					t.Fatal(err)
				}
				dashboard := admin.do("GET", "/admin", "", "", nil)
				wantStatus(t, "dashboard "+when, dashboard, 200)
				filter := admin.do("GET", "/admin/plugins?status="+tc.status, "", "", nil)
				wantStatus(t, tc.status+" filter "+when, filter, 200)
				rec := httptest.NewRecorder()
				metrics.New(b.store.SummaryReader(store.LocalSite, readmodel.DevSeparate)).Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
				return s[tc.countKey], s[tc.readAtKey], dashboard.body, filter.body, rec.Body.String()
			}

			for _, when := range []string{"with no feed", "with only " + tc.other + " read"} {
				count, readAt, page, empty, exposition := read(when)
				if string(count) != "null" || string(readAt) != "null" {
					t.Errorf("%s: the summary says %s %s (%s %s), want null", when, tc.countKey, count, tc.readAtKey, readAt)
				}
				if !strings.Contains(page, tc.unreadShown) || !strings.Contains(page, tc.countHidden) || !strings.Contains(page, tc.unreadWords) {
					t.Errorf("%s: the dashboard does not say %s was not checked:\n%s", when, tc.name, page)
				}
				if !strings.Contains(empty, tc.emptyUnread) {
					t.Errorf("%s: the empty %s filter does not say the feed was not read:\n%s", when, tc.status, empty)
				}
				if strings.Contains(exposition, "\n"+tc.metric+" ") {
					t.Errorf("%s: /metrics gives a %s count:\n%s", when, tc.name, exposition)
				}
				b.db.MustExec(t, `INSERT INTO feeds (kind, url, epoch, last_success_at) VALUES ($1, $2, 1, now())
					ON CONFLICT DO NOTHING`, tc.other, tc.otherURL)
				b.reads.Changed() // as a feed sync tells the reads
			}

			b.db.MustExec(t, `INSERT INTO feeds (kind, url, epoch, last_success_at) VALUES ($1, $2, 1, '2026-12-01T03:00:00Z')`, tc.feed, tc.feedURL)
			b.reads.Changed()
			count, readAt, page, empty, exposition := read("with " + tc.feed + " read")
			var at time.Time
			if err := json.Unmarshal(readAt, &at); err != nil || string(count) != "0" || !at.Equal(time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)) {
				t.Errorf("%s read: the summary says %s %s read at %s, want 0 read at 2026-12-01T03:00:00Z", tc.feed, tc.countKey, count, readAt)
			}
			if strings.Contains(page, tc.unreadShown) || !strings.Contains(page, tc.countShown) || strings.Contains(page, tc.countHidden) {
				t.Errorf("%s read: the dashboard does not show the count 0:\n%s", tc.feed, page)
			}
			if strings.Contains(empty, tc.emptyUnread) || !strings.Contains(empty, tc.emptyRead) {
				t.Errorf("%s read: the empty %s filter says otherwise:\n%s", tc.feed, tc.status, empty)
			}
			if !strings.Contains(exposition, "\n"+tc.metric+" 0\n") {
				t.Errorf("%s read: /metrics has no %s count 0:\n%s", tc.feed, tc.name, exposition)
			}
		})
	}
}
