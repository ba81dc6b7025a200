package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

// The notify commands: add prints the id and the full URL, and the secret
// on its last line; list shows the channel with its URL masked and its
// test event; a bad URL is refused with a reason; remove deletes, and
// every change is in the audit log.
func TestNotifyCommands(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL}
	out, code := cli(t, env, "notify", "add", "webhook", "--url", "https://hooks.example/services/upcheck-secret", "--events", "all")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || lines[0] != "channel 1 https://hooks.example/services/upcheck-secret (0 outstanding events queued)" ||
		!strings.HasPrefix(lines[1], "whsec_") {
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
	if out, code = cli(t, env, "notify", "list"); code != 0 || !strings.Contains(out, `"channel":1`) || !strings.Contains(out, `"type":"test"`) ||
		!strings.Contains(out, `"url":"https://hooks.example/…cret"`) || strings.Contains(out, "upcheck-secret") {
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
	var audited string
	d.QueryRow(t, "SELECT string_agg(action, ' ' ORDER BY id) FROM audit_log WHERE user_id IS NULL").Scan(&audited)
	if audited != "channel.add channel.test channel.remove" {
		t.Fatalf("audit rows of the command line: %q", audited)
	}
	if _, code = cli(t, env, "notify", "retry", "not-a-uuid"); code != 2 {
		t.Fatalf("retry with a bad id: exit %d, want 2", code)
	}
}

// `notify add email` is refused, with a reason naming the settings, when
// UPCHECK_SMTP_URL and UPCHECK_SMTP_FROM are not set (before any database
// is opened), and when an address does not parse; plain SMTP to another
// machine stops the start. With a mail server it adds the channel.
func TestNotifyAddEmail(t *testing.T) {
	t.Parallel()
	cliErr := func(env map[string]string, args ...string) (string, int) {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(""), &stdout, &stderr)
		code := exitCode(err, &stderr)
		return stderr.String(), code
	}
	// No UPCHECK_DATABASE_URL either: a refusal must come before the
	// private cluster would be started.
	msg, code := cliErr(nil, "notify", "add", "email", "--to", "ops@example.org")
	if code != 1 || !strings.Contains(msg, "UPCHECK_SMTP_URL") || !strings.Contains(msg, "UPCHECK_SMTP_FROM") {
		t.Fatalf("without SMTP settings: exit %d, %q; want 1 and a reason naming both variables", code, msg)
	}
	msg, code = cliErr(map[string]string{"UPCHECK_SMTP_URL": "smtp+plain://mail.example.org", "UPCHECK_SMTP_FROM": "upcheck@example.org"},
		"notify", "add", "email", "--to", "ops@example.org")
	if code != 1 || !strings.Contains(msg, "UPCHECK_SMTP_URL") || !strings.Contains(msg, "only to this machine") {
		t.Fatalf("plain SMTP to another machine: exit %d, %q", code, msg)
	}

	d := pgtest.New(t)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_SMTP_URL": "smtp+plain://127.0.0.1:2525",
		"UPCHECK_SMTP_FROM": "upcheck <upcheck@example.org>"}
	msg, code = cliErr(env, "notify", "add", "email", "--to", "ops@example.org, not an address")
	if code != 1 || !strings.Contains(msg, "not a list of email addresses") {
		t.Fatalf("a bad address: exit %d, %q", code, msg)
	}
	out, code := cli(t, env, "notify", "add", "email", "--to", "ops@example.org,Jo <jo@example.org>", "--events", "all")
	if code != 0 || strings.TrimSpace(out) != `channel 1 ops@example.org, "Jo" <jo@example.org> (0 outstanding events queued)` {
		t.Fatalf("notify add email: %q (exit %d)", out, code)
	}
	var stored string
	d.QueryRow(t, "SELECT name || ' ' || kind || ' ' || events || ' ' || target FROM notification_channels WHERE id = 1").Scan(&stored)
	if want := `ops@example.org email all ops@example.org, "Jo" <jo@example.org>`; stored != want {
		t.Fatalf("stored channel %q, want %q", stored, want)
	}
	if out, code = cli(t, env, "notify", "list"); code != 0 || !strings.Contains(out, `"to":"ops@example.org, \"Jo\" \u003cjo@example.org\u003e"`) {
		t.Fatalf("notify list: %q (exit %d)", out, code)
	}
}
