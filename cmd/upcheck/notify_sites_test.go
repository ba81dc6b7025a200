package main

import (
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

// notify add --sites and --fleet: the channel is stored with its scope
// and sites and listed with them; an unknown site, and --sites with
// --fleet, are refused.
func TestNotifyAddSites(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL}
	d.MustExec(t, `INSERT INTO sites (name, token_hash) VALUES ('shop', sha256('a')), ('blog', sha256('b'))`)
	if out, code := cli(t, env, "notify", "add", "webhook", "--url", "https://hooks.example/a", "--sites", "shop, blog"); code != 0 {
		t.Fatalf("notify add --sites: %q (exit %d)", out, code)
	}
	if out, code := cli(t, env, "notify", "add", "webhook", "--url", "https://hooks.example/b", "--fleet"); code != 0 {
		t.Fatalf("notify add --fleet: %q (exit %d)", out, code)
	}
	var stored string
	d.QueryRow(t, `SELECT string_agg(c.scope || ':' || coalesce((SELECT string_agg(s.name, ',' ORDER BY s.name)
	                   FROM notification_channel_sites cs JOIN sites s ON s.id = cs.site_id WHERE cs.channel_id = c.id), ''), ' ' ORDER BY c.id)
	               FROM notification_channels c`).Scan(&stored)
	if stored != "sites:blog,shop fleet:" {
		t.Fatalf("stored channels: %q", stored)
	}
	if out, code := cli(t, env, "notify", "list"); code != 0 || !strings.Contains(out, `"scope":"sites","sites":["blog","shop"]`) ||
		!strings.Contains(out, `"scope":"fleet"`) {
		t.Fatalf("notify list: %q (exit %d)", out, code)
	}
	if out, code := cli(t, env, "notify", "add", "webhook", "--url", "https://hooks.example/c", "--sites", "nope"); code != 1 {
		t.Fatalf("an unknown site: %q (exit %d), want 1", out, code)
	}
	if _, code := cli(t, env, "notify", "add", "webhook", "--url", "https://hooks.example/c", "--sites", "shop", "--fleet"); code != 2 {
		t.Fatalf("--sites with --fleet: exit %d, want 2", code)
	}
}
