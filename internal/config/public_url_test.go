package config

import (
	"strings"
	"testing"
)

// UPCHECK_PUBLIC_URL: empty, or an absolute http(s) URL (kept without its
// trailing slash); anything else stops the start with the variable's name.
func TestPublicURL(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]string{
		"":                                  "",
		"https://upcheck.example.org":       "https://upcheck.example.org",
		"https://upcheck.example.org/":      "https://upcheck.example.org",
		"http://10.0.0.5:8080/upcheck/":     "http://10.0.0.5:8080/upcheck",
		"https://ops.example.org/tools/up/": "https://ops.example.org/tools/up",
	} {
		c, err := FromEnv(env(map[string]string{"UPCHECK_PUBLIC_URL": v}))
		if err != nil || c.PublicURL != want {
			t.Errorf("%q: PublicURL %q (%v), want %q", v, c.PublicURL, err, want)
		}
	}
	for _, bad := range []string{"upcheck.example.org", "/admin", "ftp://x.example", "https://", "https://u:p@x.example",
		"https://x.example/?a=1", "https://x.example/#top", "javascript:alert(1)"} {
		if _, err := FromEnv(env(map[string]string{"UPCHECK_PUBLIC_URL": bad})); err == nil || !strings.Contains(err.Error(), "UPCHECK_PUBLIC_URL") {
			t.Errorf("%q: error %v, want a UPCHECK_PUBLIC_URL error", bad, err)
		}
	}
}
