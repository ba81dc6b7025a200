package readmodel

import (
	"strings"
	"testing"
)

// The operator's advisory links: each prefix's template takes the id; an
// id no prefix matches, or one with characters a link may not carry, is
// not linked; a setting that is not PREFIX=https-TEMPLATE-with-{id} is
// refused, naming the pair.
func TestAdvisoryLinks(t *testing.T) {
	t.Parallel()
	links, err := ParseAdvisoryLinks(" CVE-=https://cve.example/record?id={id}, GHSA-=https://ghsa.example/a/{id} ,")
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		"CVE-2026-1":          "https://cve.example/record?id=CVE-2026-1",
		"GHSA-jfh8-c2jp-5v3q": "https://ghsa.example/a/GHSA-jfh8-c2jp-5v3q",
		"PYSEC-2026-7":        "",
		"CVE-1/../x":          "",
		`CVE-1"><script>`:     "",
		"":                    "",
	} {
		if got := links.URL(id); got != want {
			t.Errorf("URL(%q) = %q, want %q", id, got, want)
		}
	}
	if got := (AdvisoryLinks)(nil).URL("CVE-2026-1"); got != "" {
		t.Errorf("no links: URL = %q, want none", got)
	}
	if l, err := ParseAdvisoryLinks(""); err != nil || l != nil {
		t.Errorf("unset = %v, %v; want none", l, err)
	}
	for _, bad := range []string{"CVE-", "=https://x.example/{id}", "CVE-=https://x.example/", "CVE-=http://x.example/{id}",
		"CVE-=https://user:pw@x.example/{id}", "CVE-=/relative/{id}", "C V E=https://x.example/{id}", ","} {
		if _, err := ParseAdvisoryLinks(bad); err == nil {
			t.Errorf("ParseAdvisoryLinks(%q) accepted", bad)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("ParseAdvisoryLinks(%q): %v names the credential", bad, err)
		}
	}
}
