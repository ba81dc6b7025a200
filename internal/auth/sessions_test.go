package auth

import "testing"

func TestSafeNext(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/dashboard":             "/dashboard",
		"/plugins?tab=security":  "/plugins?tab=security",
		"":                       "/",
		"dashboard":              "/",
		"//evil.example/x":       "/",
		`/\evil.example`:         "/",
		"/a\\b":                  "/",
		"https://evil.example/":  "/",
		"/\r\nSet-Cookie: x=1":   "/",
		"javascript:alert(1)":    "/",
		"/%2F%2Fevil.example":    "/%2F%2Fevil.example",
		"/login?next=//evil.com": "/login?next=//evil.com",
	} {
		if got := SafeNext(in); got != want {
			t.Errorf("SafeNext(%q) = %q, want %q", in, got, want)
		}
	}
}
