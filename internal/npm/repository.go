package npm

import (
	"encoding/json"
	"net/url"
	"strings"
	"unicode/utf8"
)

// MaxRepository caps a package's repository link, in bytes: a longer one
// is none.
const MaxRepository = 2000

// MaxPublisher caps a version's publisher account, in bytes (npm's own
// limit on a name is 214).
const MaxPublisher = 214

// repositoryOf is the package document's "repository" (a string, or an
// object whose "url" is one; its "directory" is ignored) as
// NormalizeRepository makes it.
func repositoryOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		var obj struct {
			URL string `json:"url"`
		}
		if json.Unmarshal(raw, &obj) != nil {
			return ""
		}
		s = obj.URL
	}
	return NormalizeRepository(s)
}

// NormalizeRepository makes a repository's address, as package.json
// writes it, the https URL of its web page: "git+https://HOST/o/r.git",
// "git://HOST/o/r.git", "ssh://git@HOST/o/r.git", "git+ssh://git@HOST/o/r"
// and "git@HOST:o/r.git" are all "https://HOST/o/r". It is "" for
// anything else (shorthands such as "o/r" or "github:o/r" name no host,
// plain http is not a link upcheck shows), and for a result longer than
// MaxRepository bytes. Credentials, query and fragment are dropped.
func NormalizeRepository(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 2*MaxRepository || !utf8.ValidString(s) {
		return ""
	}
	// scp-like: git@host:owner/repo (no scheme).
	if !strings.Contains(s, "://") {
		at, colon := strings.IndexByte(s, '@'), strings.IndexByte(s, ':')
		if at <= 0 || colon < at || strings.ContainsAny(s[:colon], "/") {
			return ""
		}
		s = "ssh://" + s[:colon] + "/" + strings.TrimPrefix(s[colon+1:], "/")
	}
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	switch u.Scheme {
	case "https", "git+https", "git", "ssh", "git+ssh":
	default:
		return ""
	}
	host := u.Hostname() // an ssh or git port is not the web page's
	if u.Scheme == "https" || u.Scheme == "git+https" {
		host = u.Host
	}
	path := strings.TrimSuffix(strings.TrimRight(u.Path, "/"), ".git")
	path = strings.TrimRight(path, "/")
	if host == "" || path == "" || strings.ContainsAny(host, " \t") {
		return ""
	}
	out := (&url.URL{Scheme: "https", Host: host, Path: path}).String()
	if len(out) > MaxRepository {
		return ""
	}
	return out
}

// publisherOf is a version's _npmUser.name, cut to MaxPublisher bytes
// (at a character), "" when there is none.
func publisherOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var u struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &u) != nil {
		return ""
	}
	name := strings.TrimSpace(u.Name)
	if len(name) > MaxPublisher {
		name = name[:MaxPublisher]
		for !utf8.ValidString(name) {
			name = name[:len(name)-1]
		}
	}
	return name
}

// trustedPublisherOf reports whether a version's _npmUser names a trusted
// publisher (trustedPublisher: the registry's record that the version was
// published by a CI workflow's OIDC identity).
func trustedPublisherOf(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	var u struct {
		TrustedPublisher json.RawMessage `json:"trustedPublisher"`
	}
	if json.Unmarshal(raw, &u) != nil {
		return false
	}
	t := strings.TrimSpace(string(u.TrustedPublisher))
	return t != "" && t != "null" && t != "false"
}
