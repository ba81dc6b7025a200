package views

import (
	"context"
	"strings"
	"testing"
)

// A URL wraps after a slash, ?, & and =, and before a dot or #; the text
// is the URL unchanged, and what templ writes between the parts adds no
// space.
func TestURLText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ url, want string }{
		{"https://hooks.example.org/services/T0/x?token=abc&channel=sec#top",
			"https://|hooks|.example|.org/|services/|T0/|x?|token=|abc&amp;|channel=|sec|#top"},
		{"http://127.0.0.1:8080/acme.json", "http://|127|.0|.0|.1:8080/|acme|.json"},
		{"/", "/"},
		{"", ""},
		{"ops@example.org", "ops@example|.org"},
	} {
		var b strings.Builder
		if err := URLText(c.url).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		got := strings.TrimSuffix(strings.TrimPrefix(b.String(), `<span class="url">`), `</span>`)
		if got := strings.ReplaceAll(got, "<wbr>", "|"); got != c.want {
			t.Errorf("URLText(%q) = %q, want %q", c.url, got, c.want)
		}
	}
}

// An empty value is a dash, read as "none"; a value is itself.
func TestOrDash(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]string{
		"":      `<span aria-hidden="true">—</span><span class="visually-hidden">none</span>`,
		"Ops &": "Ops &amp;",
	} {
		var b strings.Builder
		if err := OrDash(v).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("OrDash(%q) = %q, want %q", v, b.String(), want)
		}
	}
}
