package views

import (
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// A refused lockfile is said on every page, above the other alerts, with
// its error as text (a lockfile is the site's, its words are not markup);
// with none refused there is no such alert.
func TestInputBanner(t *testing.T) {
	t.Parallel()
	r := readmodel.InputRefusal{Input: readmodel.InputLockfile, Path: "/srv/site/package-lock.json",
		Error: `invalid lockfile: /srv/site/package-lock.json line 2: "<script>" is not a version`, Since: now, RefusedAt: now}
	for _, page := range []struct {
		name string
		s    readmodel.Summary
	}{
		{"dashboard", readmodel.Summary{InputRefusals: []readmodel.InputRefusal{r}}},
	} {
		root := doc(t, Dashboard(DashboardProps{Layout: layout(page.s, true)}))
		alert := one(t, root, "input-refused")
		got := text(alert)
		for _, want := range []string{
			"The lockfile /srv/site/package-lock.json was refused: the installed components are those of the last lockfile accepted",
			`"<script>" is not a version`,
			"Refused since " + readmodel.TimeText(now),
		} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: alert %q, want %q", page.name, got, want)
			}
		}
	}
	root := doc(t, Dashboard(DashboardProps{Layout: layout(readmodel.Summary{}, true)}))
	if n := len(byTestID(root, "input-refused")); n != 0 {
		t.Errorf("%d refusal alerts with no input refused", n)
	}
}
