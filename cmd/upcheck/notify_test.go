package main

import (
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/pgtest"
)

// The notify commands: add prints the id and the secret on its last line,
// list shows the channel and its test event, a bad URL is refused with a
// reason, remove deletes.
func TestNotifyCommands(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL}
	out, code := cli(t, env, "notify", "add", "webhook", "--url", "https://hooks.example/upcheck", "--events", "all")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "channel 1 ") || !strings.HasPrefix(lines[1], "whsec_") {
		t.Fatalf("notify add: %q (exit %d)", out, code)
	}
	var stored string
	d.QueryRow(t, "SELECT name || ' ' || kind || ' ' || events FROM notification_channels WHERE id = 1").Scan(&stored)
	if stored != "hooks.example webhook all" {
		t.Fatalf("stored channel: %q", stored)
	}
	if out, code = cli(t, env, "notify", "test", "1"); code != 0 || len(strings.TrimSpace(out)) != 36 {
		t.Fatalf("notify test: %q (exit %d)", out, code)
	}
	if out, code = cli(t, env, "notify", "list"); code != 0 || !strings.Contains(out, `"channel":1`) || !strings.Contains(out, `"type":"test"`) {
		t.Fatalf("notify list: %q (exit %d)", out, code)
	}
	if _, code = cli(t, env, "notify", "add", "webhook", "--url", "ftp://x.example/"); code != 1 {
		t.Fatalf("a bad URL: exit %d, want 1", code)
	}
	if _, code = cli(t, env, "notify", "remove", "1"); code != 0 {
		t.Fatalf("notify remove: exit %d", code)
	}
	var left int
	d.QueryRow(t, "SELECT (SELECT count(*) FROM notification_channels) + (SELECT count(*) FROM notification_events)").Scan(&left)
	if left != 0 {
		t.Fatalf("%d rows left after remove", left)
	}
	if _, code = cli(t, env, "notify", "retry", "not-a-uuid"); code != 2 {
		t.Fatalf("retry with a bad id: exit %d, want 2", code)
	}
}
