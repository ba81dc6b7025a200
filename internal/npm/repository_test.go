package npm

import (
	"strings"
	"testing"
	"time"
)

func TestNormalizeRepository(t *testing.T) {
	t.Parallel()
	long := "https://git.example.test/" + strings.Repeat("a", MaxRepository)
	for in, want := range map[string]string{
		"https://git.example.test/acme/blog":            "https://git.example.test/acme/blog",
		"https://git.example.test/acme/blog.git":        "https://git.example.test/acme/blog",
		"git+https://git.example.test/acme/blog.git":    "https://git.example.test/acme/blog",
		"git+https://bob:pw@git.example.test/acme/blog": "https://git.example.test/acme/blog",
		"git://git.example.test/acme/blog.git":          "https://git.example.test/acme/blog",
		"ssh://git@git.example.test/acme/blog.git":      "https://git.example.test/acme/blog",
		"ssh://git@git.example.test:2222/acme/blog.git": "https://git.example.test/acme/blog",
		"git+ssh://git@git.example.test/acme/blog.git":  "https://git.example.test/acme/blog",
		"git@git.example.test:acme/blog.git":            "https://git.example.test/acme/blog",
		"  https://git.example.test/acme/blog/  ":       "https://git.example.test/acme/blog",
		"https://git.example.test/acme/blog#main?x=1":   "https://git.example.test/acme/blog",
		"https://git.example.test:8443/acme/blog":       "https://git.example.test:8443/acme/blog",
		"http://git.example.test/acme/blog":             "",
		"acme/blog":                                     "",
		"github:acme/blog":                              "",
		"file:///srv/blog.git":                          "",
		"javascript:alert(1)":                           "",
		"https:///acme/blog":                            "",
		"https://git.example.test":                      "",
		"":                                              "",
		long:                                            "",
	} {
		if got := NormalizeRepository(in); got != want {
			t.Errorf("NormalizeRepository(%q) = %q, want %q", in, got, want)
		}
	}
}

// pkgDoc is a package document whose "repository" member is repo (raw
// JSON; "" for none) and whose versions are vs (raw JSON members).
func pkgDoc(repo, vs string) string {
	doc := `{"name": "@acme/blog", "dist-tags": {"latest": "1.1.0"}, `
	if repo != "" {
		doc += `"repository": ` + repo + `, `
	}
	return doc + `"versions": {` + vs + `}}`
}

func TestDecodePackageRepositoryForms(t *testing.T) {
	t.Parallel()
	for repo, want := range map[string]string{
		`"git+https://git.example.test/acme/blog.git"`:                                               "https://git.example.test/acme/blog",
		`{"type": "git", "url": "git@git.example.test:acme/blog.git", "directory": "packages/blog"}`: "https://git.example.test/acme/blog",
		`{"type": "git", "url": "git://git.example.test/acme/blog"}`:                                 "https://git.example.test/acme/blog",
		`{"type": "git"}`:                       "",
		`"acme/blog"`:                           "",
		`["https://git.example.test/a/b"]`:      "",
		`42`:                                    "",
		`{"url": {"nested": "https://x.test"}}`: "",
		``:                                      "",
	} {
		pkg, err := DecodePackage(strings.NewReader(pkgDoc(repo, `"1.1.0": {}`)), DefaultMaxDocument)
		if err != nil {
			t.Fatalf("%s: %v", repo, err)
		}
		if pkg.Repository != want {
			t.Errorf("repository %s: %q, want %q", repo, pkg.Repository, want)
		}
	}
}

func TestDecodePackagePublisher(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", MaxPublisher) // two bytes each
	pkg, err := DecodePackage(strings.NewReader(pkgDoc("", `
		"1.0.0": {"_npmUser": {"name": "alice", "email": "alice@example.test"}},
		"1.1.0": {"_npmUser": {"name": " mallory "}},
		"1.2.0": {},
		"1.3.0": {"_npmUser": "alice"},
		"1.4.0": {"_npmUser": {"name": "`+long+`"}}`)), DefaultMaxDocument)
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[string]string{"1.0.0": "alice", "1.1.0": "mallory", "1.2.0": "", "1.3.0": "", "1.4.0": long[:MaxPublisher]} {
		if got := pkg.Versions[v].Publisher; got != want {
			t.Errorf("%s: publisher %q, want %q", v, got, want)
		}
	}
}

func TestOfferCarriesTheRepositoryAsNotesLink(t *testing.T) {
	t.Parallel()
	pkg := &Package{Name: "@acme/blog", DistTags: map[string]string{"latest": "1.1.0"}, Repository: "https://git.example.test/acme/blog",
		Versions: map[string]Version{"1.0.0": {}, "1.1.0": {}}, Published: map[string]time.Time{}}
	o := OfferFor(pkg, "1.0.0", "", nil)
	if len(o.Package.Releases) == 0 {
		t.Fatal("nothing offered")
	}
	for _, r := range o.Package.Releases {
		if r.URL != pkg.Repository {
			t.Errorf("%s: url %q", r.Version, r.URL)
		}
	}
	pkg.Repository = ""
	if o := OfferFor(pkg, "1.0.0", "", nil); o.Package.Releases[0].URL != "" {
		t.Errorf("no repository: url %q", o.Package.Releases[0].URL)
	}
}

func TestNewPublisher(t *testing.T) {
	t.Parallel()
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	type ver struct {
		publisher string
		at        int // day of publication; 0: no publish time
	}
	for _, tc := range []struct {
		name     string
		versions map[string]ver
		version  string
		account  string
		isNew    bool
	}{
		{"same account as before", map[string]ver{"1.0.0": {"alice", 1}, "1.1.0": {"alice", 2}}, "1.1.0", "alice", false},
		{"new account", map[string]ver{"1.0.0": {"alice", 1}, "1.1.0": {"mallory", 2}}, "1.1.0", "mallory", true},
		{"an account seen before among others", map[string]ver{"1.0.0": {"bob", 1}, "1.0.1": {"alice", 2}, "1.1.0": {"bob", 3}}, "1.1.0", "bob", false},
		{"first version: nothing earlier", map[string]ver{"1.0.0": {"alice", 1}}, "1.0.0", "alice", false},
		{"no earlier publisher known: no claim", map[string]ver{"1.0.0": {"", 1}, "1.1.0": {"mallory", 2}}, "1.1.0", "mallory", false},
		{"no publisher said for the version: no claim", map[string]ver{"1.0.0": {"alice", 1}, "1.1.0": {"", 2}}, "1.1.0", "", false},
		{"no publisher anywhere", map[string]ver{"1.0.0": {"", 1}, "1.1.0": {"", 2}}, "1.1.0", "", false},
		{"published later only counts not", map[string]ver{"1.0.0": {"alice", 1}, "1.1.0": {"mallory", 2}, "1.2.0": {"mallory", 3}}, "1.1.0", "mallory", true},
		{"a later version by the account does not vouch", map[string]ver{"1.0.0": {"alice", 1}, "1.2.0": {"mallory", 3}, "1.1.0": {"mallory", 2}}, "1.2.0", "mallory", false},
		{"published at the same time is not earlier", map[string]ver{"1.0.0": {"alice", 1}, "1.0.1": {"mallory", 2}, "1.1.0": {"mallory", 2}}, "1.1.0", "mallory", true},
		{"an earlier version without a time is not counted", map[string]ver{"1.0.0": {"mallory", 0}, "1.0.1": {"alice", 1}, "1.1.0": {"mallory", 2}}, "1.1.0", "mallory", true},
		{"by publish time, not version order", map[string]ver{"2.0.0": {"alice", 1}, "1.5.0": {"mallory", 2}}, "1.5.0", "mallory", true},
		{"the version has no publish time: no claim", map[string]ver{"1.0.0": {"alice", 1}, "1.1.0": {"mallory", 0}}, "1.1.0", "", false},
		{"not listed", map[string]ver{"1.0.0": {"alice", 1}}, "9.9.9", "", false},
	} {
		pkg := &Package{Name: "@acme/blog", Versions: map[string]Version{}, Published: map[string]time.Time{}}
		for v, x := range tc.versions {
			pkg.Versions[v] = Version{Publisher: x.publisher}
			if x.at != 0 {
				pkg.Published[v] = day(x.at)
			}
		}
		account, isNew := NewPublisher(pkg, tc.version)
		if isNew != tc.isNew || (isNew && account != tc.account) {
			t.Errorf("%s: NewPublisher = %q, %v; want %q, %v", tc.name, account, isNew, tc.account, tc.isNew)
		}
	}
}
