package main

import (
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

// `notify add --min-epss P` stores the channel's threshold; one that is not
// a probability is refused as usage, nothing stored.
func TestNotifyAddMinEPSS(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL}
	if out, code := cli(t, env, "notify", "add", "webhook", "--url", "https://hooks.example/x", "--min-epss", "0.25"); code != 0 {
		t.Fatalf("notify add --min-epss 0.25: %q (exit %d)", out, code)
	}
	var stored float64
	d.QueryRow(t, "SELECT min_epss FROM notification_channels WHERE id = 1").Scan(&stored)
	if stored != 0.25 {
		t.Fatalf("stored min_epss %v, want 0.25", stored)
	}
	if out, code := cli(t, env, "notify", "list"); code != 0 || !strings.Contains(out, `"min_epss":0.25`) {
		t.Errorf("notify list: %q (exit %d), want the threshold", out, code)
	}
	for _, bad := range []string{"1.5", "-1", "often"} {
		if out, code := cli(t, env, "notify", "add", "webhook", "--url", "https://hooks.example/y", "--min-epss", bad); code != 2 {
			t.Errorf("--min-epss %s: %q (exit %d), want usage (2)", bad, out, code)
		}
	}
	var n int
	d.QueryRow(t, "SELECT count(*) FROM notification_channels").Scan(&n)
	if n != 1 {
		t.Errorf("%d channels, want only the good one", n)
	}
}
