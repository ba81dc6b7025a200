package notify

import (
	"strings"
	"testing"
)

// A viewer never sees more of a webhook URL than its scheme and host, nor
// an email address; an admin sees the host and the last four characters.
func TestShownTarget(t *testing.T) {
	t.Parallel()
	const hook = "https://hooks.example/services/T000/B000/XXXXsecretXXXXwxyz"
	for _, c := range []struct {
		kind, target string
		admin        bool
		want         string
	}{
		{"slack", hook, false, "https://hooks.example/…"},
		{"slack", hook, true, "https://hooks.example/…wxyz"},
		{"webhook", "https://h.example/x?token=abcdefgh1234", true, "https://h.example/…1234"},
		{"webhook", "https://h.example/abc", true, "https://h.example/…"},
		{"webhook", "https://user:pw@h.example/hook-with-a-long-path", true, "https://h.example/…path"},
		{"email", "ops@example.org", true, "ops@example.org"},
		{"email", "ops@example.org", false, "an email address (shown to admins)"},
	} {
		got := ShownTarget(c.kind, c.target, c.admin)
		if strings.Contains(got, "secret") || strings.Contains(got, "pw") {
			t.Errorf("ShownTarget(%q) showed a credential: %q", c.target, got)
		}
		if got != c.want {
			t.Errorf("ShownTarget(%q, %q, admin %v) = %q, want %q", c.kind, c.target, c.admin, got, c.want)
		}
	}
}
