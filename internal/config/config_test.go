package config

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaults(t *testing.T) {
	t.Parallel()
	c, err := FromEnv(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:8080" || c.DataDir != ".data" || c.TestTimings || c.Timings != (Timings{}) {
		t.Fatalf("defaults = %+v", c)
	}
}

// UPCHECK_TEST_TIMINGS names some durations and leaves the others unset; a
// setting that cannot be read stops the start with the variable's name.
// Whether the durations work together is the lease's rule, tested in
// internal/app.
func TestTestTimings(t *testing.T) {
	t.Parallel()
	c, err := FromEnv(env(map[string]string{"UPCHECK_TEST_TIMINGS": "lease=3s, heartbeat=500ms,cooldown=0s,"}))
	if err != nil {
		t.Fatal(err)
	}
	got := c.Timings
	if !c.TestTimings || got.Lease == nil || *got.Lease != 3*time.Second || got.Heartbeat == nil || *got.Heartbeat != 500*time.Millisecond ||
		got.Cooldown == nil || *got.Cooldown != 0 || got.Period != nil || got.TxTimeout != nil {
		t.Fatalf("timings = %+v", got)
	}
	c, err = FromEnv(env(map[string]string{"UPCHECK_TEST_TIMINGS": "period=1h,tx=2s"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Timings; got.Period == nil || *got.Period != time.Hour || got.TxTimeout == nil || *got.TxTimeout != 2*time.Second || got.Lease != nil {
		t.Fatalf("timings = %+v", got)
	}
	c, err = FromEnv(env(map[string]string{"UPCHECK_TEST_TIMINGS": "delivery=3s,backoff=200ms"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Timings; got.Delivery == nil || *got.Delivery != 3*time.Second || got.Backoff == nil || *got.Backoff != 200*time.Millisecond {
		t.Fatalf("notification timings = %+v", got)
	}
	for _, bad := range []string{"lease=3", "nap=1s", "lease"} {
		if _, err := FromEnv(env(map[string]string{"UPCHECK_TEST_TIMINGS": bad})); err == nil || !strings.Contains(err.Error(), "UPCHECK_TEST_TIMINGS") {
			t.Errorf("%q: error %v, want a UPCHECK_TEST_TIMINGS error", bad, err)
		}
	}
}

// UPCHECK_METRICS_PUBLIC opens /metrics only when it says 1; a value it
// cannot read stops the start instead of guessing either way.
func TestMetricsPublic(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]bool{"": false, "0": false, "1": true} {
		c, err := FromEnv(env(map[string]string{"UPCHECK_METRICS_PUBLIC": v}))
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		if c.MetricsPublic != want {
			t.Errorf("UPCHECK_METRICS_PUBLIC=%q: MetricsPublic %v, want %v", v, c.MetricsPublic, want)
		}
	}
	for _, bad := range []string{"yes", "true", "2"} {
		if _, err := FromEnv(env(map[string]string{"UPCHECK_METRICS_PUBLIC": bad})); err == nil || !strings.Contains(err.Error(), "UPCHECK_METRICS_PUBLIC") {
			t.Errorf("%q: error %v, want a UPCHECK_METRICS_PUBLIC error", bad, err)
		}
	}
}

// UPCHECK_TRUSTED_PROXIES: CIDRs or single addresses, comma-separated; a
// setting that cannot be read, or that trusts every address, stops the
// start with the variable's name.
func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	c, err := FromEnv(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.TrustedProxies) != 0 {
		t.Fatalf("default trusted proxies %v, want none", c.TrustedProxies)
	}
	c, err = FromEnv(env(map[string]string{"UPCHECK_TRUSTED_PROXIES": " 10.0.0.0/8, 192.0.2.7 ,2001:db8::/32,fd00::1,10.1.2.3/16,::ffff:172.16.0.0/108,"}))
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("2001:db8::/32"),
		netip.MustParsePrefix("fd00::1/128"), netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("172.16.0.0/12"),
	}
	if !slices.Equal(c.TrustedProxies, want) {
		t.Fatalf("trusted proxies %v, want %v", c.TrustedProxies, want)
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.example", "10.0.0.0/8;192.0.2.1", "0.0.0.0/0", "::/0", "fe80::1%eth0"} {
		if _, err := FromEnv(env(map[string]string{"UPCHECK_TRUSTED_PROXIES": bad})); err == nil || !strings.Contains(err.Error(), "UPCHECK_TRUSTED_PROXIES") {
			t.Errorf("%q: error %v, want a UPCHECK_TRUSTED_PROXIES error", bad, err)
		}
	}
}

// UPCHECK_SMTP_URL and UPCHECK_SMTP_FROM: both or neither; STARTTLS for
// smtp://, TLS for smtps://, plain SMTP to this machine only; a setting
// that cannot work is an error naming its variable (and never the
// password).
func TestSMTP(t *testing.T) {
	t.Parallel()
	const from = "upcheck <upcheck@example.org>"
	c, err := FromEnv(env(nil))
	if err != nil || c.SMTP != (SMTP{}) {
		t.Fatalf("no email settings: %+v %v, want the zero SMTP", c.SMTP, err)
	}
	for raw, want := range map[string]SMTP{
		"smtp://user:p%40ss@mail.example.org": {Security: "starttls", Host: "mail.example.org", Port: 587, Username: "user", Password: "p@ss", From: from},
		"smtp://mail.example.org:2587/":       {Security: "starttls", Host: "mail.example.org", Port: 2587, From: from},
		"smtps://mail.example.org":            {Security: "tls", Host: "mail.example.org", Port: 465, From: from},
		"smtp+plain://localhost":              {Security: "none", Host: "localhost", Port: 25, From: from},
		"smtp+plain://127.0.0.1:2525":         {Security: "none", Host: "127.0.0.1", Port: 2525, From: from},
		"smtp+plain://u:pw@[::1]:2525":        {Security: "none", Host: "::1", Port: 2525, Username: "u", Password: "pw", From: from},
	} {
		c, err := FromEnv(env(map[string]string{"UPCHECK_SMTP_URL": raw, "UPCHECK_SMTP_FROM": from}))
		if err != nil || c.SMTP != want {
			t.Errorf("%s: %+v %v, want %+v", raw, c.SMTP, err, want)
		}
	}
	for _, bad := range []struct{ url, from, names string }{
		{"smtp://mail.example.org", "", "UPCHECK_SMTP_FROM"},
		{"", from, "UPCHECK_SMTP_URL"},
		{"smtp+plain://mail.example.org", from, "UPCHECK_SMTP_URL"},
		{"smtp+plain://10.0.0.1:25", from, "UPCHECK_SMTP_URL"},
		{"http://mail.example.org", from, "UPCHECK_SMTP_URL"},
		{"mail.example.org:587", from, "UPCHECK_SMTP_URL"},
		{"smtp://", from, "UPCHECK_SMTP_URL"},
		{"smtp://mail.example.org:0", from, "UPCHECK_SMTP_URL"},
		{"smtp://mail.example.org/inbox", from, "UPCHECK_SMTP_URL"},
		{"smtp://mail.example.org?tls=none", from, "UPCHECK_SMTP_URL"},
		{"smtp://user:secret@mail.example.org:x", from, "UPCHECK_SMTP_URL"},
		{"smtp://mail.example.org", "not an address", "UPCHECK_SMTP_FROM"},
	} {
		_, err := FromEnv(env(map[string]string{"UPCHECK_SMTP_URL": bad.url, "UPCHECK_SMTP_FROM": bad.from}))
		if err == nil || !strings.Contains(err.Error(), bad.names) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%q, %q: error %v, want one naming %s (and no password)", bad.url, bad.from, err, bad.names)
		}
	}
}

// UPCHECK_TREE_HISTORY_RETENTION is days or a duration, at least a day;
// unset is 0 (housekeeping's default).
func TestTreeHistoryRetention(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]time.Duration{"": 0, "400d": 400 * 24 * time.Hour, "48h": 48 * time.Hour, " 30d ": 30 * 24 * time.Hour} {
		c, err := FromEnv(env(map[string]string{"UPCHECK_TREE_HISTORY_RETENTION": v}))
		if err != nil || c.TreeHistoryRetention != want {
			t.Errorf("%q: %s, %v; want %s", v, c.TreeHistoryRetention, err, want)
		}
	}
	for _, v := range []string{"12h", "0d", "-3d", "forever", "400 days", "d"} {
		_, err := FromEnv(env(map[string]string{"UPCHECK_TREE_HISTORY_RETENTION": v}))
		if err == nil || !strings.Contains(err.Error(), "UPCHECK_TREE_HISTORY_RETENTION") {
			t.Errorf("%q: %v; want a refusal naming the variable", v, err)
		}
	}
}

// UPCHECK_SITE_STALE_AFTER is days or a duration, at least a day; unset
// is 0 (the default's, 7 days, applied where it is read).
func TestSiteStaleAfter(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]time.Duration{"": 0, "7d": 7 * 24 * time.Hour, "36h": 36 * time.Hour} {
		c, err := FromEnv(env(map[string]string{"UPCHECK_SITE_STALE_AFTER": v}))
		if err != nil || c.SiteStaleAfter != want {
			t.Errorf("%q: %s, %v; want %s", v, c.SiteStaleAfter, err, want)
		}
	}
	for _, v := range []string{"2h", "soon", "-3d"} {
		if _, err := FromEnv(env(map[string]string{"UPCHECK_SITE_STALE_AFTER": v})); err == nil || !strings.Contains(err.Error(), "UPCHECK_SITE_STALE_AFTER") {
			t.Errorf("%q: %v, want a refusal naming the variable", v, err)
		}
	}
}
