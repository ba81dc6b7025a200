// Package demo is what `make run` shows a newcomer: a publisher served by
// upcheck itself on loopback, with a plain update, a security update, an
// advisory with no fix, a signed source, an up-to-date plugin and a failing
// source; the same server answering as an npm registry (RegistryPath) for
// the @demo packages, with a deprecated installed version, a release that
// needs a newer core, a release that lost provenance and a plain update;
// and the manifests of a site that uses them, the npm one with a release
// waiting for its soak and a skipped version.
package demo

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/dev/npmreg"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// Publisher serves the demo's update documents.
type Publisher struct {
	key      updatedoc.PublicKey
	docs     map[string][]byte
	sigs     map[string]string
	sequence int64
	npm      *npmreg.Registry
}

// NewPublisher makes the documents and signs the signed one with a fresh
// key. The sequence is the start time, so it only grows across restarts.
func NewPublisher(now time.Time) (*Publisher, error) {
	pub, priv, err := updatedoc.GenerateKey()
	if err != nil {
		return nil, err
	}
	seq := now.Unix()
	expires := now.Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339)
	released := now.Add(-72 * time.Hour).UTC().Format(time.RFC3339)
	// A release of an hour ago: under the events plugin's 3-day soak, it
	// waits (NpmManifest).
	fresh := now.Add(-time.Hour).UTC().Format(time.RFC3339)
	reg, err := newRegistry(now.Add(-72 * time.Hour))
	if err != nil {
		return nil, err
	}
	p := &Publisher{key: pub, sequence: seq, docs: map[string][]byte{}, sigs: map[string]string{}, npm: reg}
	p.docs["/core.json"] = fmt.Appendf(nil, `{"format": 1, "publisher": "upcheck-demo", "sequence": %d, "expires": %q,
  "packages": {"core": {"releases": [
    {"version": "1.9.0", "released": "2026-09-01T10:00:00Z"},
    {"version": "1.10.0", "released": %q, "summary": "Faster admin pages, new plugin API hooks",
     "url": "https://example.org/upcheck-demo/core-1.10.0"}]}}}`, seq, expires, released)
	p.docs["/acme.json"] = fmt.Appendf(nil, `{"format": 1, "publisher": "acme", "sequence": %d, "expires": %q,
  "packages": {
    "blog": {
      "releases": [{"version": "2.4.0", "released": %q, "requires_core": ">=1.8.0", "security": true,
                    "severity": "high", "summary": "Fixes stored XSS in comments",
                    "url": "https://example.org/acme/blog-2.4.0"}],
      "advisories": [{"id": "ACME-2026-007", "severity": "high", "affected": "<2.4.0", "fixed_in": "2.4.0",
                      "summary": "Stored XSS in comments", "url": "https://example.org/acme/ACME-2026-007",
                      "aliases": ["CVE-2026-99007"], "cvss": "CVSS:3.1/AV:N/AC:L/PR:L/UI:R/S:C/C:H/I:H/A:N",
                      "modified": "2026-11-20T10:00:00Z",
                      "references": [{"type": "FIX", "url": "https://example.org/acme/blog-2.4.0"}]}]},
    "gallery": {
      "releases": [{"version": "3.1.0", "released": "2026-10-02T09:00:00Z"}],
      "advisories": [{"id": "ACME-2026-011", "severity": "medium", "affected": "<=3.1.0",
                      "summary": "Image metadata is shown to anonymous visitors; no fix yet"}]},
    "forms": {"releases": [{"version": "1.4.2", "released": "2026-08-15T12:00:00Z"}]},
    "events": {"releases": [
      {"version": "4.0.0", "released": "2026-06-01T08:00:00Z"},
      {"version": "4.0.1", "released": "2026-09-10T08:00:00Z", "summary": "New calendar layout",
       "url": "https://example.org/acme/events-4.0.1"},
      {"version": "4.1.0", "released": %q, "summary": "Recurring events",
       "url": "https://example.org/acme/events-4.1.0"}]}}}`, seq, expires, released, fresh)
	p.docs["/signed.json"] = fmt.Appendf(nil, `{"format": 1, "publisher": "nordic", "sequence": %d, "expires": %q,
  "packages": {"newsletter": {"releases": [
    {"version": "5.0.0", "released": "2026-07-01T08:00:00Z"},
    {"version": "5.1.0", "released": %q, "requires_core": ">=2.0.0", "summary": "Needs the 2.x core",
     "url": "https://example.org/nordic/newsletter-5.1.0"}]}}}`, seq, expires, released)
	p.sigs["/signed.json"] = updatedoc.Sign(p.docs["/signed.json"], priv)
	return p, nil
}

// ServeHTTP serves the documents, and below RegistryPath answers as the
// demo packages' npm registry; /broken.json always fails, as a publisher
// having a bad day.
func (p *Publisher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, RegistryPath) {
		p.npm.ServeHTTP(w, r)
		return
	}
	if r.URL.Path == "/broken.json" {
		http.Error(w, "publisher unavailable", http.StatusServiceUnavailable)
		return
	}
	body, ok := p.docs[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if sig := p.sigs[r.URL.Path]; sig != "" {
		w.Header().Set("Upcheck-Signature", sig)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// RegistryURL is the address of the demo's npm registry when the demo is
// served at base: what `npm config get registry` would print on the demo
// site.
func RegistryURL(base string) string { return base + RegistryPath }

// Manifest is the demo site's installed components as update documents
// alone, pointing at the publisher at base (for example
// "http://127.0.0.1:43123"): for checks that read no npm registry.
func (p *Publisher) Manifest(base string) *manifest.Manifest {
	return &manifest.Manifest{Components: []manifest.Component{
		{Code: "core", Name: "Core", Version: "1.9.0", Source: base + "/core.json"},
		{Code: "blog", Name: "Blog", Version: "2.3.0", Source: base + "/acme.json"},
		{Code: "gallery", Name: "Gallery", Version: "3.1.0", Source: base + "/acme.json"},
		{Code: "forms", Name: "Forms", Version: "1.4.2", Source: base + "/acme.json"},
		{Code: "newsletter", Name: "Newsletter", Version: "5.0.0", Source: base + "/signed.json", Key: p.key.String()},
		{Code: "shop", Name: "Shop", Version: "0.9.1", Source: base + "/broken.json"},
		{Code: "legacy-theme", Name: "Legacy theme", Version: "1.0.0"},
	}}
}

// NpmManifest is the demo site of `make run`: Manifest's plugins, the core
// the npm package CorePackage (so that the npm plugins' peerDependencies
// on it give the core they require) and four npm plugins, read from the
// registry at RegistryURL(base).
func (p *Publisher) NpmManifest(base string) *manifest.Manifest {
	m := p.Manifest(base)
	for i, c := range m.Components {
		if c.Code == "core" {
			m.Components[i].Source = npm.Source(CorePackage)
		}
	}
	m.Components = append(m.Components,
		manifest.Component{Code: "seo", Name: "SEO", Version: "2.0.0", Source: npm.Source(Scope + "/seo")},
		manifest.Component{Code: "search", Name: "Search", Version: "3.0.0", Source: npm.Source(Scope + "/search")},
		manifest.Component{Code: "comments", Name: "Comments", Version: "1.2.0", Source: npm.Source(Scope + "/comments")},
		manifest.Component{Code: "analytics", Name: "Analytics", Version: "0.4.0", Source: npm.Source(Scope + "/analytics")},
		// The policy's parts (docs/policy.md): a release that waits for
		// its soak, and a version the site skipped, from the manifest.
		manifest.Component{Code: "events", Name: "Events", Version: "4.0.0", Source: base + "/acme.json",
			Policy: release.Policy{Soak: "3d"}},
	)
	m.Skips = []manifest.Skip{{Component: "events", Version: "4.0.1", Reason: "the new calendar layout breaks our theme"}}
	return m
}
