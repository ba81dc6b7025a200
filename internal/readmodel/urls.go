package readmodel

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// ShownURL is how a URL that may carry a credential is shown to someone
// who did not just type it: a channel's webhook target (a Slack webhook's
// path is its secret) and a feed's URL (a mirror's access token in its
// query). A viewer (admin false) sees its scheme and host only; an admin
// sees the scheme and host and the last four characters of the rest (path
// and query), enough to tell two apart. The userinfo is never shown. ok
// is false when raw is not an absolute URL with a host; the caller then
// names what it is instead.
func ShownURL(raw string, admin bool) (shown string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", false
	}
	origin := u.Scheme + "://" + u.Host // never the userinfo
	rest := u.EscapedPath()
	if u.RawQuery != "" {
		rest += "?" + u.RawQuery
	}
	if !admin || rest == "" || rest == "/" {
		return origin + "/…", true
	}
	if n := utf8.RuneCountInString(rest); n > 8 {
		r := []rune(rest)
		return origin + "/…" + string(r[n-4:]), true
	}
	return origin + "/…", true
}

// ShownFeedURL is a feed's URL as Source health and the API show it:
// masked as ShownURL masks it (a mirror's token rides in the query), or,
// for a file brought by `upcheck feed import` with no URL configured for
// its kind, that it was one.
func ShownFeedURL(raw string, admin bool) string {
	if shown, ok := ShownURL(raw, admin); ok {
		return shown
	}
	if strings.HasPrefix(raw, "file:") {
		return "a file imported by hand"
	}
	return "a URL (not shown)"
}
