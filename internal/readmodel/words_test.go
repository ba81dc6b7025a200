package readmodel

import (
	"strings"
	"testing"
	"time"
)

// Measured lengths are short, elapsed ones approximate; moments and days
// have one format each, in UTC.
func TestTimeWords(t *testing.T) {
	t.Parallel()
	for s, want := range map[int]string{-3: "0 s", 45: "45 s", 60: "1 min 0 s", 113: "1 min 53 s"} {
		if got := SecondsText(s); got != want {
			t.Errorf("SecondsText(%d) = %q, want %q", s, got, want)
		}
	}
	for s, want := range map[int]string{1: "1 second", 45: "45 seconds", 89: "89 seconds", 113: "about 2 minutes"} {
		if got := SpokenSecondsText(s); got != want {
			t.Errorf("SpokenSecondsText(%d) = %q, want %q", s, got, want)
		}
	}
	for ms, want := range map[int64]string{850: "850 ms", 4200: "4.2 s", 125_000: "2 min 5 s"} {
		if got := RunText(ms); got != want {
			t.Errorf("RunText(%d) = %q, want %q", ms, got, want)
		}
	}
	at := time.Date(2026, 12, 6, 4, 56, 30, 0, time.FixedZone("elsewhere", 5*3600))
	if got := TimeText(at); got != "2026-12-05 23:56 UTC" {
		t.Errorf("TimeText = %q", got)
	}
	if got := DateText(at); got != "5 Dec 2026" {
		t.Errorf("DateText = %q", got)
	}
	for d, want := range map[time.Duration]string{
		30 * time.Second: "just now", -30 * time.Second: "in under a minute", 5 * time.Minute: "5 minutes ago",
		-3 * 24 * time.Hour: "in 3 days", 47 * time.Hour: "1 day ago", 31 * 24 * time.Hour: "4 Nov 2026",
	} {
		if got := AgoText(at, at.Add(-d)); got != want {
			t.Errorf("AgoText(now-%v) = %q, want %q", d, got, want)
		}
	}
}

// Every refused skip has its sentence, naming the version, in words that
// hold on the page, in the API and on the command line alike.
func TestSkipRefusalText(t *testing.T) {
	t.Parallel()
	for _, r := range []SkipRefusal{SkipReasonRequired, SkipReasonTooLong, SkipFromManifest, SkipNotAVersion, SkipNotNewer,
		SkipNoSuchRelease, SkipPrerelease, SkipWayOut, SkipSecurity, SkipNotEvaluated} {
		s := SkipRefusalText(r, "2.4.0", 500)
		if s == "" || !strings.HasSuffix(s, ".") || strings.Contains(s, "below") || strings.Contains(s, "top of the page") {
			t.Errorf("%s: %q", r, s)
		}
	}
	if s := SkipRefusalText(SkipNotNewer, "2.4.0", 500); !strings.HasPrefix(s, "“2.4.0” is not newer") {
		t.Errorf("not newer: %q", s)
	}
	if s := SkipRefusalText(SkipReasonTooLong, "", 500); !strings.Contains(s, "500 characters") {
		t.Errorf("too long: %q", s)
	}
}
