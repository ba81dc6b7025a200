package web_test

import (
	"strings"
	"testing"
)

// detail is what the tests read of GET /api/admin/plugins/{code}.
type detail struct {
	Code            string  `json:"code"`
	Evaluated       bool    `json:"evaluated"`
	Vulnerable      bool    `json:"vulnerable"`
	VulnerableNoFix bool    `json:"vulnerable_no_fix"`
	Security        bool    `json:"security"`
	NeedsNewerCore  bool    `json:"needs_newer_core"`
	UpdateVersion   *string `json:"update_version"`
	SecurityRelease *struct {
		Version     string `json:"version"`
		Installable bool   `json:"installable"`
	} `json:"security_release"`
	BlockedUpdate *struct {
		Version      string  `json:"version"`
		RequiresCore *string `json:"requires_core"`
	} `json:"blocked_update"`
	Source *struct {
		URL           string  `json:"url"`
		Failing       bool    `json:"failing"`
		PinnedKey     *string `json:"pinned_key"`
		LastSuccessAt *string `json:"last_success_at"`
		LastErrorKind *string `json:"last_error_kind"`
		Problem       *string `json:"problem"`
	} `json:"source"`
	Releases []struct {
		Version  string `json:"version"`
		Security bool   `json:"security"`
	} `json:"releases"`
	Advisories []struct {
		ID        string   `json:"id"`
		Aliases   []string `json:"aliases"`
		NoFix     bool     `json:"no_fix"`
		Dismissed bool     `json:"dismissed"`
		Dismissal *struct {
			By      *string `json:"by"`
			Reason  string  `json:"reason"`
			InForce bool    `json:"in_force"`
		} `json:"dismissal"`
	} `json:"advisories"`
}

// A component's detail: the page's facts as JSON, for viewers and
// tokens; 401 without a principal, 404 in words for an unknown code.
func TestAPIComponentDetail(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin, viewer := b.login("admin@example.test"), b.login("viewer@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)

	wantError(t, "anonymous detail", b.anonymous().do("GET", "/api/admin/plugins/gallery", "", "", nil), 401, "authentication required")
	r := viewer.do("GET", "/api/admin/plugins/gallery", "", "", nil)
	wantStatus(t, "viewer detail", r, 200)
	if r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control = %q", r.header.Get("Cache-Control"))
	}
	g := decodeJSON[detail](t, r)
	if g.Code != "gallery" || !g.Evaluated || !g.Vulnerable || !g.VulnerableNoFix || len(g.Advisories) != 1 {
		t.Fatalf("gallery = %+v", g)
	}
	if a := g.Advisories[0]; a.ID != "ACME-2026-011" || !a.NoFix || a.Dismissed || a.Dismissal != nil {
		t.Errorf("gallery's advisory = %+v, want ACME-2026-011, no fix, not dismissed", a)
	}
	if g.Source == nil || !strings.HasSuffix(g.Source.URL, "/acme.json") || g.Source.Failing || g.Source.LastSuccessAt == nil || g.Source.Problem != nil {
		t.Errorf("gallery's source = %+v", g.Source)
	}

	blog := decodeJSON[detail](t, b.anonymous().do("GET", "/api/admin/plugins/blog", "", "", b.bearer("viewer@example.test")))
	if blog.SecurityRelease == nil || blog.SecurityRelease.Version != "2.4.0" || !blog.SecurityRelease.Installable ||
		len(blog.Releases) != 1 || !blog.Releases[0].Security {
		t.Errorf("blog's security release and releases = %+v %+v", blog.SecurityRelease, blog.Releases)
	}
	if len(blog.Advisories) != 1 || len(blog.Advisories[0].Aliases) != 1 || blog.Advisories[0].Aliases[0] != "CVE-2026-99007" {
		t.Errorf("blog's advisories = %+v, want ACME-2026-007 with its alias", blog.Advisories)
	}

	news := decodeJSON[detail](t, admin.do("GET", "/api/admin/plugins/newsletter", "", "", nil))
	if news.BlockedUpdate == nil || news.BlockedUpdate.Version != "5.1.0" || news.BlockedUpdate.RequiresCore == nil ||
		news.Source == nil || news.Source.PinnedKey == nil || !strings.HasPrefix(*news.Source.PinnedKey, "ed25519:") {
		t.Errorf("newsletter = %+v; want 5.1.0 blocked by the core, and its pinned key", news)
	}

	shop := decodeJSON[detail](t, admin.do("GET", "/api/admin/plugins/shop", "", "", nil))
	if shop.Source == nil || !shop.Source.Failing || shop.Source.LastErrorKind == nil || *shop.Source.LastErrorKind != "http_status" ||
		shop.Source.Problem == nil || *shop.Source.Problem == "" {
		t.Errorf("shop's source = %+v; want failing with the kind and the words of its 503", shop.Source)
	}

	legacy := decodeJSON[detail](t, admin.do("GET", "/api/admin/plugins/legacy-theme", "", "", nil))
	if legacy.Source != nil || legacy.Evaluated || legacy.Releases == nil || legacy.Advisories == nil {
		t.Errorf("legacy-theme = %+v; want no source, not evaluated, empty lists (not null)", legacy)
	}

	wantError(t, "unknown code", admin.do("GET", "/api/admin/plugins/nope", "", "", nil), 404, "No installed component has the code “nope”.")

	// A dismissal shows in the detail, with who and why.
	r = admin.sendJSON("POST", "/api/admin/plugins/gallery/advisories/ACME-2026-011/dismissal", map[string]string{"reason": "no images are public"}, true, nil)
	wantStatus(t, "dismiss", r, 201)
	g = decodeJSON[detail](t, viewer.do("GET", "/api/admin/plugins/gallery", "", "", nil))
	a := g.Advisories[0]
	if !a.Dismissed || a.Dismissal == nil || a.Dismissal.Reason != "no images are public" || !a.Dismissal.InForce ||
		a.Dismissal.By == nil || *a.Dismissal.By != "admin@example.test" || g.Vulnerable {
		t.Errorf("gallery after the dismissal: %+v, advisory %+v", g, a)
	}
}
