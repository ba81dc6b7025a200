package demo

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/dev/feedserver"
	"github.com/upcheck/upcheck/internal/dev/osvgen"
)

// FeedsPath is where the demo serves its advisory feeds, below its
// address: an OSV archive of the demo packages' advisories with its
// modified_id.csv and records, a known-exploited catalogue and an EPSS
// file. FeedsSetting gives their addresses.
const FeedsPath = "/feeds/"

// The demo feeds' paths, below the demo's address.
const (
	FeedsArchivePath = FeedsPath + "osv/all.zip"
	FeedsKEVPath     = FeedsPath + "kev.json"
	FeedsEPSSPath    = FeedsPath + "epss.csv.gz"
)

// The demo feeds' advisories: the core's flaw is exploited in the wild
// (in the KEV catalogue), the installed SEO release is a known malicious
// package (a compromised release, MAL record), search has a moderate flaw
// whose fix needs the 2.x core, and analytics' advisory was withdrawn (so
// it counts for nothing).
const (
	DemoExploitedAdvisory = "GHSA-7f4q-m2xc-9hwr" // @demo/core <1.10.0
	DemoExploitedCVE      = "CVE-2026-99100"
	DemoMaliciousRecord   = "MAL-2026-4242"       // @demo/seo 2.0.0
	DemoSearchAdvisory    = "GHSA-c3jr-p5g8-wq6v" // @demo/search >=3.0.0 <3.1.0
	DemoSearchCVE         = "CVE-2026-99102"
	DemoWithdrawnAdvisory = "GHSA-x8h2-q9fm-5c7p" // @demo/analytics, withdrawn
)

// FeedsSetting is the UPCHECK_FEEDS value that points upcheck at the
// demo's feeds when the demo is served at base.
func FeedsSetting(base string) string {
	return "osv=" + base + FeedsArchivePath + ",kev=" + base + FeedsKEVPath + ",epss=" + base + FeedsEPSSPath
}

// Feeds serves the demo's advisory feeds below FeedsPath, from the feed
// server the tests and the bench use (internal/dev/feedserver), with
// ETags and Last-Modified (answering conditional requests with 304).
type Feeds struct {
	srv     *feedserver.Server
	handler http.Handler
}

// NewFeeds makes the feeds; the KEV entry was added ten days before now
// and is due three weeks after it was added, as the catalogue sets.
func NewFeeds(now time.Time) (*Feeds, error) {
	now = now.UTC().Truncate(time.Second)
	recs := map[string][]byte{
		DemoExploitedAdvisory: ghsa(DemoExploitedAdvisory, DemoExploitedCVE, CorePackage, "1.0.0", "1.10.0", "2026-11-18T09:00:00Z",
			"Remote code execution through crafted plugin manifests in @demo/core",
			"A plugin manifest with a crafted `hooks` field is evaluated as code when the admin pages load it, so anyone who can upload a plugin (or trick an admin into installing one) runs code on the server. Attacks using this flaw have been seen in the wild. It is fixed in 1.10.0.",
			"CRITICAL", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", "CWE-94", ""),
		DemoSearchAdvisory: ghsa(DemoSearchAdvisory, DemoSearchCVE, Scope+"/search", "3.0.0", "3.1.0", "2026-11-10T14:30:00Z",
			"Search results show unpublished articles in @demo/search",
			"The search index includes drafts, and a query for words of a draft lists its title and first lines to anonymous visitors. 3.1.0 indexes published articles only; it needs the 2.x core.",
			"MODERATE", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N", "CWE-200", ""),
		DemoWithdrawnAdvisory: ghsa(DemoWithdrawnAdvisory, "", Scope+"/analytics", "0", "0.5.0", "2026-10-02T08:00:00Z",
			"Visitor IP addresses stored in clear in @demo/analytics",
			"This advisory was withdrawn: the addresses are truncated before they are stored, as the documentation says.",
			"LOW", "CVSS:3.1/AV:N/AC:H/PR:H/UI:N/S:U/C:L/I:N/A:N", "CWE-312", "2026-10-05T08:00:00Z"),
		DemoMaliciousRecord: malicious(DemoMaliciousRecord, Scope+"/seo", "2.0.0", "2026-06-13T07:00:00Z"),
	}
	ids := slices.Sorted(maps.Keys(recs))
	srv := feedserver.New("") // four records: in memory
	if err := srv.SetRecords(func(yield func(string, []byte) bool) {
		for _, id := range ids {
			if !yield(id, recs[id]) {
				return
			}
		}
	}); err != nil {
		return nil, fmt.Errorf("demo feeds: %w", err)
	}
	added := now.AddDate(0, 0, -10).Truncate(24 * time.Hour)
	if err := srv.SetKEV(osvgen.KEVCatalog{Released: now, Entries: []osvgen.KEVEntry{{
		CVE: DemoExploitedCVE, VendorProject: "Upcheck demo", Product: CorePackage,
		Name: "Upcheck demo @demo/core Code Injection Vulnerability", DateAdded: added,
		ShortDescription: "The @demo/core package evaluates crafted plugin manifests as code, which allows remote code execution.",
		RequiredAction:   "Apply mitigations per vendor instructions or discontinue use of the product if mitigations are unavailable.",
		DueDate:          added.AddDate(0, 0, 21), RansomwareUse: "Unknown", Notes: "A demo entry: upcheck's own demo site.", CWEs: []string{"CWE-94"},
	}}}); err != nil {
		return nil, fmt.Errorf("demo feeds: %w", err)
	}
	if err := srv.SetEPSS(osvgen.EPSSFile{Model: "v2025.03.14", Date: now, Scores: []osvgen.EPSSScore{
		{CVE: "CVE-2026-99007", EPSS: 0.0312, Percentile: 0.825}, // the publisher's blog advisory's alias
		{CVE: DemoExploitedCVE, EPSS: 0.94312, Percentile: 0.99917},
		{CVE: DemoSearchCVE, EPSS: 0.00231, Percentile: 0.4612},
	}}); err != nil {
		return nil, fmt.Errorf("demo feeds: %w", err)
	}
	// The feed server answers at its root: below FeedsPath here.
	return &Feeds{srv: srv, handler: http.StripPrefix(strings.TrimSuffix(FeedsPath, "/"), srv)}, nil
}

// ServeHTTP answers the feeds' paths (the full path, FeedsPath included).
func (f *Feeds) ServeHTTP(w http.ResponseWriter, r *http.Request) { f.handler.ServeHTTP(w, r) }

// ghsa is a reviewed GHSA advisory of a demo package in the OSV format, as
// the npm ecosystem's archive holds them; withdrawn "" means in force.
func ghsa(id, cve, pkg, introduced, fixed, modified, summary, details, severity, vector, cwe, withdrawn string) []byte {
	aliases, refs := "[]", ""
	if cve != "" {
		aliases = fmt.Sprintf("[%q]", cve)
		refs = fmt.Sprintf(`{"type": "ADVISORY", "url": "https://example.org/cve/%s"}, `, cve)
	}
	w := ""
	if withdrawn != "" {
		w = fmt.Sprintf(`"withdrawn": %q, `, withdrawn)
	}
	return fmt.Appendf(nil, `{"schema_version": "1.4.0", "id": %q, "modified": %q, "published": %q, %s"aliases": %s,
  "summary": %q, "details": %q,
  "severity": [{"type": "CVSS_V3", "score": %q}],
  "affected": [{"package": {"ecosystem": "npm", "name": %q},
    "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": %q}, {"fixed": %q}]}]}],
  "references": [%s{"type": "ADVISORY", "url": "https://example.org/advisories/%s"},
    {"type": "PACKAGE", "url": "https://example.org/npm/%s"}],
  "database_specific": {"cwe_ids": [%q], "severity": %q, "github_reviewed": true}}
`, id, modified, modified, w, aliases, summary, details, vector, pkg, introduced, fixed, refs, id, pkg, cwe, severity)
}

// malicious is a malicious-packages record of one compromised release.
func malicious(id, pkg, version, modified string) []byte {
	return fmt.Appendf(nil, `{"schema_version": "1.5.0", "id": %q, "modified": %q, "published": %q,
  "summary": "Malicious code in %s (npm)",
  "details": "\n---\n_-= Per source details. Do not edit below this line.=-_\n\n## Source: demo-analysis\nRelease %s of %s was published from a stolen token, without provenance. On install it sends the site's unpublished drafts and its environment variables to a remote host.\n",
  "affected": [{"package": {"ecosystem": "npm", "name": %q}, "versions": [%q]}],
  "database_specific": {"malicious-packages-origins": [{"source": "demo-analysis", "modified_time": %q, "versions": [%q]}]}}
`, id, modified, modified, pkg, version, pkg, pkg, version, modified, version)
}
