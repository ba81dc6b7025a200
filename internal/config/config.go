// Package config reads upcheck's configuration from the environment once, into
// a value that is validated and then passed down explicitly. There are no
// globals: tests build a Config of their own.
//
// Config holds plain values (strings, numbers, durations, addresses and
// structs of its own), checked for their syntax here. It imports no package
// of the module: a setting that stands for a domain value (a policy, the
// feeds, the lockfile's options, the advisory links, the npm registry) is
// kept as the operator wrote it and read by its own package's rules at the
// composition root (internal/app's SettingsFrom), whose errors name the
// variable the same way.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config is everything the process needs to know about its surroundings.
type Config struct {
	// DatabaseURL is the PostgreSQL connection string; empty means the
	// private cluster under DataDir (started on demand).
	DatabaseURL string
	// Listen is the HTTP address of `serve`.
	Listen string
	// Manifest is the path of the components manifest (JSON or YAML).
	Manifest string
	// AllowPrivateSources lets publishers live on loopback or private
	// addresses (local publishers and tests).
	AllowPrivateSources bool
	// DataDir holds the private cluster and other local state.
	DataDir string
	// Timings are the lease durations UPCHECK_TEST_TIMINGS names; the
	// others keep the lease's production values (internal/app combines
	// them and the lease validates the result).
	Timings Timings
	// TestTimings is set when UPCHECK_TEST_TIMINGS is set.
	TestTimings bool
	// LogLevel is the minimum level logged.
	LogLevel slog.Level
	// CheckSchedule is a five-field cron expression (UTC) for the scheduled
	// check; empty means the installation's stored random daily time.
	CheckSchedule string
	// Version is the build's version, sent in the User-Agent.
	Version string
	// SecureCookies marks the session cookie Secure even over plain HTTP
	// (behind a TLS-terminating proxy); TLS requests always get it.
	SecureCookies bool
	// AdminPassword, when set, is the demo admin's password (otherwise one
	// is generated and printed once).
	AdminPassword string
	// FetchTimeout bounds one request to a publisher (default 15s).
	FetchTimeout time.Duration
	// Demo serves a demo publisher on loopback and a demo site using it
	// (`serve --demo`, what `make run` shows).
	Demo bool
	// TrustedProxies (UPCHECK_TRUSTED_PROXIES) are the reverse proxies in
	// front of upcheck. A request whose TCP peer is inside one of them is
	// from the client its X-Forwarded-For names (the rightmost entry that
	// is not a trusted proxy); empty: the client is always the peer, and
	// forwarding headers are ignored. Login throttling counts per client.
	TrustedProxies []netip.Prefix
	// MetricsPublic (UPCHECK_METRICS_PUBLIC=1) serves /metrics without an
	// API token; by default a scraper needs a token of a user who may view.
	MetricsPublic bool
	// AdvisoryLinks (UPCHECK_ADVISORY_LINKS, "PREFIX=TEMPLATE,...") are
	// where the detail page links an advisory's aliases (a CVE, a GHSA id)
	// to their public record; empty by default: the aliases are shown as
	// text. The text as set; readmodel.ParseAdvisoryLinks reads it.
	AdvisoryLinks string

	// SMTP is the mail server of email notifications (UPCHECK_SMTP_URL,
	// UPCHECK_SMTP_FROM); the zero value when neither is set, and then
	// email channels cannot be added. See ParseSMTP.
	SMTP SMTP
	// PublicURL (UPCHECK_PUBLIC_URL) is the URL operators reach the AdminCP
	// at ("https://upcheck.example.org", no trailing slash): notifications
	// link to a component's page under it. Empty: they carry no link.
	PublicURL string

	// NpmRegistry (UPCHECK_NPM_REGISTRY) is the default npm registry, what
	// `npm config get registry` prints on the site; it wins over the
	// .npmrc's registry= line. Empty: the .npmrc's, or none.
	NpmRegistry string
	// Npmrc (UPCHECK_NPMRC) is the path of the site's .npmrc: its
	// registry=, @scope:registry= and //host/path/:_authToken= lines.
	Npmrc string
	// NpmMaxDocument (UPCHECK_NPM_MAX_DOCUMENT, bytes) caps a package
	// document's decoded size; 0 when unset (the npm package's default).
	NpmMaxDocument int64
	// NpmDependencyDocuments (UPCHECK_NPM_DEPENDENCY_DOCUMENTS) is how
	// many added dependencies' documents one check fetches at most; nil
	// when unset (the check's default).
	NpmDependencyDocuments *int
	// Lockfile (UPCHECK_LOCKFILE) is the site's package-lock.json or
	// pnpm-lock.yaml, read by serve as its components instead of a
	// manifest; LockfileInclude (UPCHECK_LOCKFILE_INCLUDE, comma-separated
	// globs) and LockfileCore (UPCHECK_LOCKFILE_CORE, a package name) say
	// which locked packages are components (lockfile.Options);
	// LockfilePolicy (UPCHECK_LOCKFILE_POLICY, a manifest's "policy" as
	// JSON, trimmed) is their site-wide policy (docs/policy.md).
	Lockfile        string
	LockfileInclude []string
	LockfileCore    string
	LockfilePolicy  string
	// TreeHistoryRetention (UPCHECK_TREE_HISTORY_RETENTION, "400d" or a
	// Go duration) is how long the installed tree's history keeps a
	// version after it was removed; 0 when unset (housekeeping's default,
	// 400 days).
	TreeHistoryRetention time.Duration
	// LockfileDev (UPCHECK_LOCKFILE_DEV, trimmed) is how the findings on
	// packages installed only for development are shown and counted
	// (readmodel.DevMode, read in internal/app); "" for the default.
	LockfileDev string
	// SiteStaleAfter (UPCHECK_SITE_STALE_AFTER, "7d" or a Go duration, at
	// least a day) is how long a registered site may go without a push
	// before it is stale; 0 when unset (readmodel.DefaultSiteStaleAfter).
	SiteStaleAfter time.Duration
	Feeds          string // UPCHECK_FEEDS and UPCHECK_FEED_DIR: feeds.go
	FeedDir        string
	// Env is the environment FromEnv read, for the .npmrc's ${NAME}
	// references; nil (a Config built by hand) has none set.
	Env func(string) string
}

// FromEnv builds a Config from environment variables read through getenv.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		DatabaseURL:         getenv("UPCHECK_DATABASE_URL"),
		Listen:              getenv("UPCHECK_LISTEN"),
		Manifest:            getenv("UPCHECK_MANIFEST"),
		AllowPrivateSources: getenv("UPCHECK_ALLOW_PRIVATE_SOURCES") == "1",
		DataDir:             getenv("UPCHECK_DATA_DIR"),
		CheckSchedule:       getenv("UPCHECK_CHECK_SCHEDULE"),
		SecureCookies:       getenv("UPCHECK_SECURE_COOKIES") == "1",
		AdminPassword:       getenv("UPCHECK_ADMIN_PASSWORD"),
		Version:             "dev",
		Env:                 getenv,
	}
	if c.Listen == "" {
		c.Listen = "127.0.0.1:8080"
	}
	if c.DataDir == "" {
		c.DataDir = ".data"
	}
	if v := getenv("UPCHECK_LOG_LEVEL"); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			return Config{}, fmt.Errorf("UPCHECK_LOG_LEVEL: %w", err)
		}
	}
	c.AdvisoryLinks = getenv("UPCHECK_ADVISORY_LINKS")
	if v := getenv("UPCHECK_TRUSTED_PROXIES"); v != "" {
		p, err := ParseTrustedProxies(v)
		if err != nil {
			return Config{}, fmt.Errorf("UPCHECK_TRUSTED_PROXIES: %w", err)
		}
		c.TrustedProxies = p
	}
	switch v := getenv("UPCHECK_METRICS_PUBLIC"); v {
	case "", "0":
	case "1":
		c.MetricsPublic = true
	default:
		// Guessing either way is wrong for a switch that decides who may
		// read the metrics: "true" must not quietly leave them closed, nor
		// a typo open them.
		return Config{}, fmt.Errorf("UPCHECK_METRICS_PUBLIC: want 1 or 0, got %q", v)
	}
	smtp, err := ParseSMTP(getenv("UPCHECK_SMTP_URL"), getenv("UPCHECK_SMTP_FROM"))
	if err != nil {
		return Config{}, err
	}
	c.SMTP = smtp
	if c.PublicURL, err = ParsePublicURL(getenv("UPCHECK_PUBLIC_URL")); err != nil {
		return Config{}, err
	}
	if v := getenv("UPCHECK_FETCH_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("UPCHECK_FETCH_TIMEOUT: want a positive duration such as 15s, got %q", v)
		}
		c.FetchTimeout = d
	}
	if err := errors.Join(c.readNpm(getenv), c.readFeeds(getenv)); err != nil {
		return Config{}, err
	}
	if v := getenv("UPCHECK_TEST_TIMINGS"); v != "" {
		t, err := ParseTimings(v)
		if err != nil {
			return Config{}, fmt.Errorf("UPCHECK_TEST_TIMINGS: %w", err)
		}
		c.Timings, c.TestTimings = t, true
	}
	return c, c.Validate()
}

// Validate reports settings that cannot work.
func (c Config) Validate() error {
	var errs []error
	if c.Listen == "" {
		errs = append(errs, errors.New("UPCHECK_LISTEN is empty"))
	}
	if c.Manifest != "" && c.Lockfile != "" {
		errs = append(errs, errors.New("UPCHECK_MANIFEST and UPCHECK_LOCKFILE are both set: the components come from one of them; unset the other"))
	}
	if c.NpmMaxDocument < 0 {
		errs = append(errs, fmt.Errorf("UPCHECK_NPM_MAX_DOCUMENT: %d is not a size", c.NpmMaxDocument))
	}
	return errors.Join(errs...)
}

// readNpm reads the npm registry and lockfile settings. The registry's
// URL, the lockfile's options and its policy are read by the npm,
// lockfile and manifest packages' rules in internal/app (SettingsFrom);
// the .npmrc itself when the process opens (npm.LoadRegistries): it may
// name environment variables, and its errors name its lines.
func (c *Config) readNpm(getenv func(string) string) error {
	c.NpmRegistry = strings.TrimSpace(getenv("UPCHECK_NPM_REGISTRY"))
	c.Npmrc = getenv("UPCHECK_NPMRC")
	if v := strings.TrimSpace(getenv("UPCHECK_NPM_MAX_DOCUMENT")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("UPCHECK_NPM_MAX_DOCUMENT: want a positive number of bytes such as %d (64 MiB), got %q", ExampleMaxDocument, v)
		}
		c.NpmMaxDocument = n
	}
	if v := strings.TrimSpace(getenv("UPCHECK_NPM_DEPENDENCY_DOCUMENTS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("UPCHECK_NPM_DEPENDENCY_DOCUMENTS: want a number of documents, 0 or more, such as 200, got %q", v)
		}
		c.NpmDependencyDocuments = &n
	}
	c.Lockfile = getenv("UPCHECK_LOCKFILE")
	c.LockfileInclude = SplitList(getenv("UPCHECK_LOCKFILE_INCLUDE"))
	c.LockfileCore = strings.TrimSpace(getenv("UPCHECK_LOCKFILE_CORE"))
	c.LockfilePolicy = strings.TrimSpace(getenv("UPCHECK_LOCKFILE_POLICY"))
	if v := strings.TrimSpace(getenv("UPCHECK_TREE_HISTORY_RETENTION")); v != "" {
		d, err := ParseRetention(v)
		if err != nil {
			return fmt.Errorf("UPCHECK_TREE_HISTORY_RETENTION: %w", err)
		}
		c.TreeHistoryRetention = d
	}
	c.LockfileDev = strings.TrimSpace(getenv("UPCHECK_LOCKFILE_DEV"))
	if v := strings.TrimSpace(getenv("UPCHECK_SITE_STALE_AFTER")); v != "" {
		d, err := ParseRetention(v)
		if err != nil {
			return fmt.Errorf("UPCHECK_SITE_STALE_AFTER: %w", err)
		}
		c.SiteStaleAfter = d
	}
	return nil
}

// ParseRetention reads a retention: a number of days ("400d") or a Go
// duration ("9600h"), at least a day.
func ParseRetention(v string) (time.Duration, error) {
	var d time.Duration
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n > 100*365 {
			return 0, fmt.Errorf("want a number of days such as 400d, or a duration such as 9600h, got %q", v)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			return 0, fmt.Errorf("want a number of days such as 400d, or a duration such as 9600h, got %q", v)
		}
	}
	if d < 24*time.Hour {
		return 0, fmt.Errorf("want at least a day (1d), got %q", v)
	}
	return d, nil
}

// ExampleMaxDocument is the size UPCHECK_NPM_MAX_DOCUMENT's refusal offers
// as an example: npm.DefaultMaxDocument, which internal/app's
// TestSettingsFrom holds it to.
const ExampleMaxDocument = 64 << 20

// SplitList reads a comma-separated list, its entries trimmed, empty ones
// dropped; nil when there are none.
func SplitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// ParseTrustedProxies reads a comma-separated list of CIDRs ("10.0.0.0/8",
// "2001:db8::/32") or single addresses (a /32 or /128). Host bits are
// cleared ("10.1.2.3/16" is 10.1.0.0/16). A prefix that holds every address
// is refused: it would let any client name its own address in
// X-Forwarded-For.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		var p netip.Prefix
		if strings.Contains(part, "/") {
			var err error
			if p, err = netip.ParsePrefix(part); err != nil {
				return nil, fmt.Errorf("%q: want a CIDR such as 10.0.0.0/8 or an address", part)
			}
		} else {
			a, err := netip.ParseAddr(part)
			if err != nil || a.Zone() != "" {
				return nil, fmt.Errorf("%q: want a CIDR such as 10.0.0.0/8 or an address", part)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
			// Peers are compared as IPv4 (::ffff:10.0.0.1 is 10.0.0.1).
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
		if p.Bits() == 0 {
			return nil, fmt.Errorf("%q trusts every address: any client could choose its own address; name the proxies", part)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Timings are lease durations as UPCHECK_TEST_TIMINGS gives them. A nil
// field was not named and keeps the lease's production value. Config knows
// neither those values nor the rules between the durations (the heartbeat
// must fit inside the lease's trust window): both belong to internal/lease,
// and internal/app applies them.
type Timings struct {
	Lease     *time.Duration // lease=
	Heartbeat *time.Duration // heartbeat=
	Cooldown  *time.Duration // cooldown=
	Period    *time.Duration // period=
	TxTimeout *time.Duration // tx=
	// Delivery and Backoff are the notifications' delivery lease and first
	// retry delay.
	Delivery *time.Duration // delivery=
	Backoff  *time.Duration // backoff=
	// Lockfile is how often serve looks at UPCHECK_LOCKFILE
	// (lockfile.WatchInterval when not named).
	Lockfile *time.Duration // lockfile=
}

// ParseTimings reads "lease=3s,heartbeat=500ms,cooldown=2s" (any subset, plus
// period=, tx=, delivery=, backoff=, lockfile=). It checks the syntax and the keys; the values are judged
// with the lease's rules when internal/app builds the lease's timings.
func ParseTimings(s string) (Timings, error) {
	var t Timings
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		key, value, ok := strings.Cut(part, "=")
		if !ok {
			return Timings{}, fmt.Errorf("%q: want key=duration", part)
		}
		d, err := time.ParseDuration(strings.TrimSpace(value))
		if err != nil {
			return Timings{}, fmt.Errorf("%s: %w", key, err)
		}
		switch strings.TrimSpace(key) {
		case "lease":
			t.Lease = &d
		case "heartbeat":
			t.Heartbeat = &d
		case "cooldown":
			t.Cooldown = &d
		case "period":
			t.Period = &d
		case "tx":
			t.TxTimeout = &d
		case "delivery":
			t.Delivery = &d
		case "backoff":
			t.Backoff = &d
		case "lockfile":
			if d <= 0 {
				return Timings{}, fmt.Errorf("lockfile: %s is not a positive interval", d)
			}
			t.Lockfile = &d
		default:
			return Timings{}, fmt.Errorf("unknown timing %q (want lease, heartbeat, cooldown, period, tx, delivery, backoff or lockfile)", key)
		}
	}
	return t, nil
}

// ParsePublicURL reads UPCHECK_PUBLIC_URL: empty, or an absolute http or
// https URL with a host and no query, fragment or user; it is returned
// without its trailing slash.
func ParsePublicURL(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("UPCHECK_PUBLIC_URL: want the absolute http or https URL operators reach the AdminCP at, such as https://upcheck.example.org, got %q", v)
	}
	return strings.TrimRight(u.String(), "/"), nil
}
