package web_test

import (
	"net/url"
	"strings"
	"testing"
)

type apiAdvisory struct {
	ID             string   `json:"id"`
	Origins        []string `json:"origins"`
	Malicious      bool     `json:"malicious"`
	KnownExploited bool     `json:"known_exploited"`
	KEVDue         *string  `json:"kev_due"`
	EPSS           *float64 `json:"epss"`
	EPSSPercentile *float64 `json:"epss_percentile"`
	KEV            *struct {
		DateAdded      string `json:"date_added"`
		RequiredAction string `json:"required_action"`
		Ransomware     string `json:"ransomware"`
	} `json:"kev"`
}

// The API says what the feeds add, as openapi.json describes it (every
// answer is validated against it): an advisory's origins, whether it is
// exploited in the wild (KEV's due date) or malicious, its EPSS score;
// the catalog's items and filters; the summary's counts with the
// malicious package first among what needs attention.
func TestIntelInTheAPI(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	b.intelFacts()
	viewer := b.login("viewer@example.test")

	detail := decodeJSON[struct {
		Advisories []apiAdvisory `json:"advisories"`
	}](t, viewer.do("GET", "/api/admin/plugins/gallery", "", "", nil))
	if len(detail.Advisories) != 1 {
		t.Fatalf("gallery's advisories: %+v", detail.Advisories)
	}
	a := detail.Advisories[0]
	if strings.Join(a.Origins, ",") != "publisher,osv" || !a.KnownExploited || a.Malicious || a.KEVDue == nil || *a.KEVDue != "2026-11-24" ||
		a.EPSS == nil || *a.EPSS != 0.94321 || a.EPSSPercentile == nil || *a.EPSSPercentile != 0.9987 ||
		a.KEV == nil || a.KEV.DateAdded != "2026-11-03" || a.KEV.Ransomware != "Known" {
		t.Errorf("gallery's advisory: %+v", a)
	}
	forms := decodeJSON[struct {
		Advisories []apiAdvisory `json:"advisories"`
	}](t, viewer.do("GET", "/api/admin/plugins/forms", "", "", nil))
	if len(forms.Advisories) != 1 || !forms.Advisories[0].Malicious || forms.Advisories[0].KnownExploited ||
		forms.Advisories[0].EPSS != nil || strings.Join(forms.Advisories[0].Origins, ",") != "osv" {
		t.Errorf("forms' advisories: %+v", forms.Advisories)
	}
	// A publisher's advisory evaluated before the feeds is the publisher's.
	blog := decodeJSON[struct {
		Advisories []apiAdvisory `json:"advisories"`
	}](t, viewer.do("GET", "/api/admin/plugins/blog", "", "", nil))
	if len(blog.Advisories) != 1 || strings.Join(blog.Advisories[0].Origins, ",") != "publisher" || blog.Advisories[0].KEVDue != nil {
		t.Errorf("blog's advisories: %+v", blog.Advisories)
	}

	type catalog struct {
		Components []struct {
			Code           string        `json:"code"`
			Malicious      bool          `json:"malicious"`
			KnownExploited bool          `json:"known_exploited"`
			Advisories     []apiAdvisory `json:"advisories"`
		} `json:"components"`
		Total int `json:"total"`
	}
	all := decodeJSON[catalog](t, viewer.do("GET", "/api/admin/plugins/updates", "", "", nil))
	if len(all.Components) < 2 || all.Components[0].Code != "forms" || !all.Components[0].Malicious ||
		all.Components[1].Code != "gallery" || !all.Components[1].KnownExploited || all.Components[1].Malicious {
		t.Fatalf("the catalog does not put the malicious package, then the exploited one, first: %+v", all.Components)
	}
	if adv := all.Components[1].Advisories; len(adv) != 1 || adv[0].EPSS == nil || !adv[0].KnownExploited {
		t.Errorf("the catalog's advisories lack the feeds' members: %+v", adv)
	}
	for status, want := range map[string]string{"malicious": "forms", "exploited": "gallery"} {
		got := decodeJSON[catalog](t, viewer.do("GET", "/api/admin/plugins/updates?status="+status, "", "", nil))
		if got.Total != 1 || got.Components[0].Code != want {
			t.Errorf("status=%s: %+v, want %s alone", status, got, want)
		}
	}

	sum := decodeJSON[struct {
		KnownExploited int `json:"known_exploited"`
		Malicious      int `json:"malicious"`
		Attention      []struct {
			Code, Kind string
			Advisory   *struct {
				KnownExploited bool    `json:"known_exploited"`
				KEVDue         *string `json:"kev_due"`
				Malicious      bool    `json:"malicious"`
			}
		} `json:"attention"`
	}](t, viewer.do("GET", "/api/admin/plugins/updates/summary", "", "", nil))
	if sum.KnownExploited != 1 || sum.Malicious != 1 || len(sum.Attention) < 2 ||
		sum.Attention[0].Code != "forms" || sum.Attention[0].Kind != "malicious" || sum.Attention[0].Advisory == nil || !sum.Attention[0].Advisory.Malicious ||
		sum.Attention[1].Code != "gallery" || sum.Attention[1].Kind != "known_exploited" || sum.Attention[1].Advisory == nil ||
		sum.Attention[1].Advisory.KEVDue == nil || *sum.Attention[1].Advisory.KEVDue != "2026-11-24" {
		t.Errorf("summary: %+v", sum)
	}
}

// GET /api/admin/feeds lists the feeds for a viewer: the interruption and
// the last failure in words (never the technical text), skipped records;
// without a session it is refused.
func TestFeedsAPI(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.feedRows()
	viewer := b.login("viewer@example.test")
	r := viewer.do("GET", "/api/admin/feeds", "", "", nil)
	wantStatus(t, "feeds", r, 200)
	got := decodeJSON[struct {
		Feeds []struct {
			Kind         string  `json:"kind"`
			Title        string  `json:"title"`
			Records      int     `json:"records"`
			Problem      *string `json:"problem"`
			Interrupted  *string `json:"interrupted"`
			SkippedCount int     `json:"skipped_count"`
			Skipped      []struct{ ID, Path, Reason string }
		} `json:"feeds"`
	}](t, r)
	byKind := map[string]int{}
	for i, f := range got.Feeds {
		byKind[f.Kind] = i
	}
	if len(got.Feeds) != 3 {
		t.Fatalf("feeds: %s", r.body)
	}
	osv, kev, epss := got.Feeds[byKind["osv"]], got.Feeds[byKind["kev"]], got.Feeds[byKind["epss"]]
	if osv.Interrupted == nil || *osv.Interrupted != "The sync started 2026-12-01 03:00 UTC was interrupted before it finished." ||
		osv.Records != 1234 || osv.SkippedCount != 3 || len(osv.Skipped) != 1 || osv.Skipped[0].Path != "$.affected[0].ranges[0].events" {
		t.Errorf("osv: %+v", osv)
	}
	if kev.Problem != nil || kev.Interrupted != nil || kev.Title != "Known exploited vulnerabilities (KEV)" {
		t.Errorf("kev: %+v", kev)
	}
	if epss.Problem == nil || !strings.Contains(*epss.Problem, "not of this feed's kind (the column percentile is missing)") {
		t.Errorf("epss: %+v", epss)
	}
	if strings.Contains(r.body, "epss: missing column") || strings.Contains(r.body, "sync interrupted") {
		t.Errorf("a raw error reached the API: %s", r.body)
	}
	wantStatus(t, "feeds without a session", b.anonymous().do("GET", "/api/admin/feeds", "", "", nil), 401)
}

// A channel's EPSS threshold through the API and the form: stored and
// given back, refused when it is not a probability.
func TestChannelMinEPSS(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	r := admin.sendJSON("POST", apiChannels, map[string]any{"kind": "webhook", "target": hookURL, "events": "security", "min_epss": 0.2}, true, nil)
	wantStatus(t, "add with min_epss", r, 201)
	if got := decodeJSON[struct {
		MinEPSS *float64 `json:"min_epss"`
	}](t, r); got.MinEPSS == nil || *got.MinEPSS != 0.2 {
		t.Errorf("created channel's min_epss %v", got.MinEPSS)
	}
	list := decodeJSON[struct {
		Channels []struct {
			MinEPSS *float64 `json:"min_epss"`
		} `json:"channels"`
	}](t, admin.do("GET", apiChannels, "", "", nil))
	if len(list.Channels) != 1 || list.Channels[0].MinEPSS == nil || *list.Channels[0].MinEPSS != 0.2 {
		t.Errorf("listed channels %+v", list.Channels)
	}
	wantError(t, "min_epss 2", admin.sendJSON("POST", apiChannels, map[string]any{"kind": "webhook", "target": hookURL, "events": "security", "min_epss": 2}, true, nil),
		422, "a probability from 0 to 1")
	form := admin.postForm("/admin/notifications/channels", url.Values{"kind": {"webhook"}, "url": {hookURL}, "events": {"security"}, "min_epss": {"often"}})
	page := admin.do("GET", "/admin/notifications", "", "", nil)
	if form.status != 303 || !strings.Contains(page.body, "a probability from 0 to 1") || !strings.Contains(page.body, `value="often"`) {
		t.Errorf("the form's bad threshold: %d, page says %q", form.status, page.body[:min(len(page.body), 200)])
	}
}

// A feed's URL may carry a mirror's access token in its query: the API and
// Source health show it as a channel's target is shown (a viewer the
// scheme and host, an admin also the last four characters), never the
// token.
func TestFeedURLIsMaskedAsAChannelTarget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.feedRows()
	const secret = "s3cr3tT0KENxyz"
	b.db.MustExec(t, `UPDATE feeds SET url = 'http://127.0.0.1:9/npm/all.zip?token=`+secret+`abcd' WHERE kind = 'osv'`)
	for who, want := range map[string]string{"viewer@example.test": "http://127.0.0.1:9/…", "admin@example.test": "http://127.0.0.1:9/…abcd"} {
		c := b.login(who)
		r := c.do("GET", "/api/admin/feeds", "", "", nil)
		got := decodeJSON[struct {
			Feeds []struct{ Kind, URL string } `json:"feeds"`
		}](t, r)
		for _, f := range got.Feeds {
			if f.Kind == "osv" && f.URL != want {
				t.Errorf("%s: the API's osv url %q, want %q", who, f.URL, want)
			}
		}
		page := c.do("GET", "/admin/sources", "", "", nil)
		wantStatus(t, who+": Source health", page, 200)
		for name, body := range map[string]string{"the API": r.body, "Source health": page.body} {
			if strings.Contains(body, secret) || strings.Contains(body, "token=") {
				t.Errorf("%s: %s shows the feed's token", who, name)
			}
		}
		if !strings.Contains(page.body, `data-testid="feed-url">`+want+`<`) {
			t.Errorf("%s: Source health does not show the osv url as %q", who, want)
		}
	}
}
