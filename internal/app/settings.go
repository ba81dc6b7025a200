package app

import (
	"errors"
	"fmt"

	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/lockfile"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// Settings are the domain values that config's plain settings stand for,
// each read by its own package's rules: config knows the environment's
// syntax, the packages know what a policy, a feed, a lockfile's options or
// an advisory link is. Every refusal names its variable, as config's do.
type Settings struct {
	// AdvisoryLinks are UPCHECK_ADVISORY_LINKS (readmodel.ParseAdvisoryLinks).
	AdvisoryLinks readmodel.AdvisoryLinks
	// Lockfile are UPCHECK_LOCKFILE_INCLUDE, UPCHECK_LOCKFILE_CORE and
	// UPCHECK_LOCKFILE_POLICY as lockfile.Read takes them.
	Lockfile lockfile.Options
	// Feeds are UPCHECK_FEEDS (feed.ParseList); none when unset.
	Feeds []feed.Feed
	// NpmMaxDocument is UPCHECK_NPM_MAX_DOCUMENT, npm.DefaultMaxDocument
	// when unset.
	NpmMaxDocument int64
	// LockfileDev is UPCHECK_LOCKFILE_DEV (readmodel.DevMode),
	// readmodel.DevSeparate when unset: how the tree's findings on
	// packages installed only for development are shown and counted.
	LockfileDev readmodel.DevMode
}

// SettingsFrom reads c's domain settings. cmd/upcheck calls it with
// FromEnv, before any command runs, so that a setting upcheck cannot use
// stops every command at once; open calls it again for the App.
func SettingsFrom(c config.Config) (Settings, error) {
	s := Settings{Lockfile: lockfile.Options{Include: c.LockfileInclude, Core: c.LockfileCore}, NpmMaxDocument: c.NpmMaxDocument}
	if s.NpmMaxDocument == 0 {
		s.NpmMaxDocument = npm.DefaultMaxDocument
	}
	var errs []error
	links, err := readmodel.ParseAdvisoryLinks(c.AdvisoryLinks)
	if err != nil {
		errs = append(errs, fmt.Errorf("UPCHECK_ADVISORY_LINKS: %w", err))
	}
	s.AdvisoryLinks = links
	if c.NpmRegistry != "" {
		if _, err := npm.ParseRegistryURL(c.NpmRegistry); err != nil {
			errs = append(errs, fmt.Errorf("UPCHECK_NPM_REGISTRY: %w (want what `npm config get registry` prints on the site)", err))
		}
	}
	if c.LockfilePolicy != "" {
		p, err := manifest.ParsePolicy([]byte(c.LockfilePolicy))
		if err != nil {
			errs = append(errs, fmt.Errorf("UPCHECK_LOCKFILE_POLICY: %w", err))
		}
		s.Lockfile.Policy = p
	}
	if !s.Lockfile.Policy.IsZero() && c.Lockfile == "" {
		// Said rather than ignored: a hold the operator believes in would
		// hold nothing.
		errs = append(errs, errors.New("UPCHECK_LOCKFILE_POLICY is set without UPCHECK_LOCKFILE: it is the policy of a lockfile's components; a manifest says its own policy"))
	}
	s.LockfileDev = readmodel.DevSeparate
	if c.LockfileDev != "" {
		s.LockfileDev = readmodel.DevMode(c.LockfileDev)
		if !s.LockfileDev.Valid() {
			errs = append(errs, fmt.Errorf("UPCHECK_LOCKFILE_DEV: want one of %v, got %q", readmodel.DevModes, c.LockfileDev))
		}
	}
	if err := s.Lockfile.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("UPCHECK_LOCKFILE_INCLUDE or UPCHECK_LOCKFILE_CORE: %w", err))
	}
	feeds, err := feed.ParseList(c.Feeds)
	if err != nil {
		errs = append(errs, fmt.Errorf("UPCHECK_FEEDS: %w (docs/feeds.md says where each feed is published)", err))
	}
	s.Feeds = feeds
	if err := errors.Join(errs...); err != nil {
		return Settings{}, err
	}
	return s, nil
}
