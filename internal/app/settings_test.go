package app

import (
	"slices"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
)

// settingsFromEnv reads the environment as cmd/upcheck does: config's
// plain values, then their domain values.
func settingsFromEnv(m map[string]string) (config.Config, Settings, error) {
	c, err := config.FromEnv(func(k string) string { return m[k] })
	if err != nil {
		return config.Config{}, Settings{}, err
	}
	s, err := SettingsFrom(c)
	return c, s, err
}

// The example size config offers in UPCHECK_NPM_MAX_DOCUMENT's refusal is
// the npm package's default cap, which applies when it is unset.
func TestSettingsFrom(t *testing.T) {
	t.Parallel()
	if config.ExampleMaxDocument != npm.DefaultMaxDocument {
		t.Errorf("config.ExampleMaxDocument = %d, npm.DefaultMaxDocument = %d", config.ExampleMaxDocument, npm.DefaultMaxDocument)
	}
	_, s, err := settingsFromEnv(nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.NpmMaxDocument != npm.DefaultMaxDocument || s.Feeds != nil || s.AdvisoryLinks != nil || !s.Lockfile.Policy.IsZero() {
		t.Fatalf("defaults = %+v", s)
	}
}

// The npm and lockfile settings are validated with the npm, lockfile and
// manifest packages' own rules, and every refusal names its variable
// (never a credential the value carried).
func TestNpmAndLockfileSettings(t *testing.T) {
	t.Parallel()
	c, s, err := settingsFromEnv(map[string]string{
		"UPCHECK_NPM_REGISTRY":     " https://npm.example.org/repository/npm ",
		"UPCHECK_NPM_MAX_DOCUMENT": "1048576",
		"UPCHECK_LOCKFILE":         "/srv/site/pnpm-lock.yaml",
		"UPCHECK_LOCKFILE_INCLUDE": " @vitnode/*, ,left-pad,",
		"UPCHECK_LOCKFILE_CORE":    "@vitnode/core",
		"UPCHECK_LOCKFILE_POLICY":  ` {"offer": "patch", "soak": "3d"} `,
	})
	if err != nil {
		t.Fatal(err)
	}
	if o := s.Lockfile; !slices.Equal(o.Include, c.LockfileInclude) || o.Core != "@vitnode/core" ||
		o.Policy != (release.Policy{Offer: release.OfferPatch, Soak: "3d"}) || s.NpmMaxDocument != 1<<20 {
		t.Fatalf("lockfile options = %+v", o)
	}

	for _, bad := range []struct {
		env   map[string]string
		names string
	}{
		{map[string]string{"UPCHECK_NPM_REGISTRY": "npm.example.org"}, "UPCHECK_NPM_REGISTRY"},
		{map[string]string{"UPCHECK_NPM_REGISTRY": "ftp://npm.example.org/"}, "UPCHECK_NPM_REGISTRY"},
		{map[string]string{"UPCHECK_NPM_REGISTRY": "https://user:secret@npm.example.org/"}, "UPCHECK_NPM_REGISTRY"},
		{map[string]string{"UPCHECK_NPM_REGISTRY": "https://npm.example.org/?token=secret"}, "UPCHECK_NPM_REGISTRY"},
		{map[string]string{"UPCHECK_LOCKFILE_INCLUDE": "@vitnode/[blog"}, "UPCHECK_LOCKFILE_INCLUDE"},
		{map[string]string{"UPCHECK_LOCKFILE_CORE": "Not A Name"}, "UPCHECK_LOCKFILE_CORE"},
		{map[string]string{"UPCHECK_LOCKFILE_POLICY": `{"offer": "major"}`}, "UPCHECK_LOCKFILE_POLICY"},
		{map[string]string{"UPCHECK_LOCKFILE_POLICY": `{"hold": "<3.0.0"}`}, "UPCHECK_LOCKFILE_POLICY is set without UPCHECK_LOCKFILE"},
		{map[string]string{"UPCHECK_LOCKFILE_POLICY": `{"hold": "<3.0.0"}`, "UPCHECK_MANIFEST": "/srv/m.json"}, "without UPCHECK_LOCKFILE"},
		{map[string]string{"UPCHECK_LOCKFILE_POLICY": `{"soak": "3 days"}`}, "UPCHECK_LOCKFILE_POLICY"},
		{map[string]string{"UPCHECK_LOCKFILE_POLICY": `{"offer": "patch"`}, "UPCHECK_LOCKFILE_POLICY"},
	} {
		_, _, err := settingsFromEnv(bad.env)
		if err == nil || !strings.Contains(err.Error(), bad.names) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%v: error %v, want one naming %s (and no credential)", bad.env, err, bad.names)
		}
	}
}

// UPCHECK_FEEDS configures the feeds; a list upcheck cannot use stops the
// start naming the setting and where the docs say each feed is published.
func TestFeedsSetting(t *testing.T) {
	t.Parallel()
	c, s, err := settingsFromEnv(map[string]string{"UPCHECK_FEEDS": "osv=https://mirror.test/npm/all.zip, kev=https://mirror.test/kev.json",
		"UPCHECK_FEED_DIR": "/var/tmp/upcheck"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Feeds) != 2 || s.Feeds[0].Kind != readmodel.FeedOSV || s.Feeds[1].URL != "https://mirror.test/kev.json" || c.FeedDir != "/var/tmp/upcheck" {
		t.Errorf("feeds = %+v in %q", s.Feeds, c.FeedDir)
	}
	for _, bad := range []string{"osv=ftp://mirror.test/all.zip", "nvd=https://mirror.test/x.json", "kev=https://a.test/k.json,kev=https://b.test/k.json",
		"osv=https://a.test/all.zip,osv-api=https://a.test/", "kev=https://ops:s3cret@mirror.test/kev.json"} {
		if _, _, err := settingsFromEnv(map[string]string{"UPCHECK_FEEDS": bad}); err == nil || !strings.Contains(err.Error(), "UPCHECK_FEEDS") ||
			!strings.Contains(err.Error(), "docs/feeds.md") {
			t.Errorf("UPCHECK_FEEDS=%q: %v, want an error naming the setting and docs/feeds.md", bad, err)
		}
	}
}

// UPCHECK_ADVISORY_LINKS: none by default (aliases are text); the
// operator's links are read with readmodel's rules, and one it cannot read
// stops the start, naming the variable.
func TestAdvisoryLinksSetting(t *testing.T) {
	t.Parallel()
	_, s, err := settingsFromEnv(nil)
	if err != nil || s.AdvisoryLinks != nil {
		t.Fatalf("default: %v, %v; want no links", s.AdvisoryLinks, err)
	}
	_, s, err = settingsFromEnv(map[string]string{"UPCHECK_ADVISORY_LINKS": "CVE-=https://cve.example/{id}"})
	if err != nil || s.AdvisoryLinks.URL("CVE-2026-1") != "https://cve.example/CVE-2026-1" {
		t.Fatalf("links = %v, %v", s.AdvisoryLinks, err)
	}
	if _, _, err := settingsFromEnv(map[string]string{"UPCHECK_ADVISORY_LINKS": "CVE-=ftp://cve.example/{id}"}); err == nil ||
		!strings.Contains(err.Error(), "UPCHECK_ADVISORY_LINKS") {
		t.Errorf("an ftp template: %v, want a UPCHECK_ADVISORY_LINKS error", err)
	}
}
