package views

import (
	"os"
	"strings"
	"testing"
)

// pageGroups are the page groups of views: everything a page needs is in
// NAME.templ, NAME.go and NAME_*.go, its tests in NAME*_test.go.
var pageGroups = []string{"audit", "catalog", "confirm", "dashboard", "detail", "error", "fleet", "history", "login",
	"notifications", "packages", "site", "sites", "sources", "tokens", "users"}

// sharedGroups are the groups of what several pages use: the layout (and the
// banners it carries), the shared pieces, and the package's own file.
var sharedGroups = []string{"layout", "shared", "views"}

// TestFilesByPage keeps views found by page: every file belongs to a page
// group or to the shared ones, and each page has its template.
func TestFilesByPage(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		name := e.Name()
		names[name] = true
		if !inGroup(name, pageGroups) && !inGroup(name, sharedGroups) {
			t.Errorf("%s belongs to no page (%s) nor to the shared groups (%s): name it after its page",
				name, strings.Join(pageGroups, ", "), strings.Join(sharedGroups, ", "))
		}
	}
	for _, p := range pageGroups {
		if !names[p+".templ"] {
			t.Errorf("page %s has no %s.templ", p, p)
		}
	}
}

// inGroup reports whether a file name is one of groups': the group's name
// followed by "." or "_".
func inGroup(name string, groups []string) bool {
	for _, g := range groups {
		if rest, ok := strings.CutPrefix(name, g); ok && (strings.HasPrefix(rest, ".") || strings.HasPrefix(rest, "_")) {
			return true
		}
	}
	return false
}
