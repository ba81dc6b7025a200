package readmodel

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// AdvisoryLink is where the advisories whose ids begin with Prefix have
// their public record: Template, an https address with {id} where the id
// goes. The operator names them (UPCHECK_ADVISORY_LINKS); upcheck knows
// no advisory database's address.
type AdvisoryLink struct {
	Prefix, Template string
}

// AdvisoryLinks are the operator's advisory links, the first matching
// prefix winning; the zero value links no id.
type AdvisoryLinks []AdvisoryLink

// URL is the public record of the advisory id, "" when no link's prefix
// matches or the id is not one a link may carry (letters, digits and
// "-._:" only: ids come from publishers and feeds).
func (l AdvisoryLinks) URL(id string) string {
	if !plainID(id) {
		return ""
	}
	for _, link := range l {
		if strings.HasPrefix(id, link.Prefix) {
			return strings.ReplaceAll(link.Template, "{id}", url.PathEscape(id))
		}
	}
	return ""
}

// ParseAdvisoryLinks reads UPCHECK_ADVISORY_LINKS: comma-separated
// PREFIX=TEMPLATE pairs, such as "CVE-=https://cve.example/{id}".
func ParseAdvisoryLinks(s string) (AdvisoryLinks, error) {
	var out AdvisoryLinks
	n := 0
	for part := range strings.SplitSeq(s, ",") {
		n++
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		prefix, tmpl, ok := strings.Cut(part, "=")
		prefix, tmpl = strings.TrimSpace(prefix), strings.TrimSpace(tmpl)
		if !ok || prefix == "" || !plainID(prefix) {
			// Named by its place: the pair may carry what it must not.
			return nil, fmt.Errorf("pair %d: want PREFIX=TEMPLATE, the prefix the ids begin with (such as CVE-)", n)
		}
		if !strings.Contains(tmpl, "{id}") {
			return nil, fmt.Errorf("%s: the template has no {id} to put the advisory's id in", prefix)
		}
		u, err := url.Parse(strings.ReplaceAll(tmpl, "{id}", "X"))
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
			// Named by its prefix: a template may carry what it must not.
			return nil, fmt.Errorf("%s: the template is not an https address without credentials", prefix)
		}
		out = append(out, AdvisoryLink{Prefix: prefix, Template: tmpl})
	}
	if s != "" && len(out) == 0 {
		return nil, errors.New("no PREFIX=TEMPLATE pair")
	}
	return out, nil
}

// plainID: letters, digits and "-._:", at least one.
func plainID(id string) bool {
	if id == "" {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._:", r)) {
			return false
		}
	}
	return true
}
