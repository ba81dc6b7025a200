package store_test

import (
	"testing"

	"github.com/upcheck/upcheck/internal/store"
)

// upcheck_channel_sees: a local channel sees the local site alone, a
// channel of some sites those, the fleet every site; and
// upcheck_nothing_to_queue asks nothing of the local site's components
// for a channel that does not see the local site.
func testChannelSees(t *testing.T, f *fdb) {
	f.exec(t, `INSERT INTO sites (id, name, token_hash) VALUES (2, 'shop', sha256('a')), (3, 'blog', sha256('b'))`)
	f.exec(t, `INSERT INTO notification_channels (id, name, kind, target, events, scope) VALUES
		(1, 'local', 'webhook', 'https://hooks.example/1', 'security', 'local'),
		(2, 'shop', 'webhook', 'https://hooks.example/2', 'security', 'sites'),
		(3, 'fleet', 'webhook', 'https://hooks.example/3', 'security', 'fleet'),
		(4, 'shop and local', 'webhook', 'https://hooks.example/4', 'security', 'sites')`)
	f.exec(t, `INSERT INTO notification_channel_sites (channel_id, site_id) VALUES (2, 2), (4, 2), (4, 1)`)
	for _, c := range []struct {
		channel int64
		sees    string
	}{{1, "1"}, {2, "2"}, {3, "1,2,3"}, {4, "1,2"}} {
		got := f.text(t, `SELECT coalesce(string_agg(s.id::text, ',' ORDER BY s.id), '') FROM sites s, notification_channels ch
			WHERE ch.id = $1 AND upcheck_channel_sees(ch.scope, ch.id, s.id)`, c.channel)
		if got != c.sees {
			t.Errorf("channel %d sees sites %q, want %q", c.channel, got, c.sees)
		}
	}

	f.exec(t, `INSERT INTO component_results (code, source_url, installed_version, core_version, document_hash, epoch,
			security, security_version, update_available, update_version, no_fix_ids)
		VALUES ('blog', 'https://p.example/a.json', '2.3.0', '1.0.0', sha256('doc'), 1, true, '2.4.1', true, '2.5.0', '{ACME-1}')`)
	ask := askNothingToQueue(t, f)
	f.exec(t, `UPDATE notification_channels SET enabled = (id = 2)`)
	if got := ask("blog"); got != "" {
		t.Errorf("only a channel of shop: SQLSTATE %q, want none (the local site's components are not its)", got)
	}
	f.exec(t, `UPDATE notification_channels SET enabled = (id = 4)`)
	if got := ask("blog"); got != store.SQLStateEventsToQueue {
		t.Errorf("a channel of shop and the local site: SQLSTATE %q, want %s", got, store.SQLStateEventsToQueue)
	}

	// Of the local site's codes it reads the local site's results alone:
	// shop's component of the same code, with a security update, a
	// malicious version and an unfixed advisory, is not the local one's.
	f.exec(t, `INSERT INTO component_results (site_id, code, source_url, installed_version, core_version, document_hash, epoch,
			security, security_version, update_available, update_version, no_fix_ids, malicious_ids, exploited_ids)
		VALUES (2, 'shared', 'npm:shared', '1.0.0', '', sha256('doc'), 1, true, '1.0.1', true, '1.0.1', '{ACME-2}', '{MAL-1}', '{CVE-1}')`)
	f.exec(t, `UPDATE notification_channels SET enabled = (id IN (1, 3))`)
	if got := ask("shared"); got != "" {
		t.Errorf("the local channel and the fleet's, asked of the local site's code that shop has: SQLSTATE %q, want none", got)
	}
}

// upcheck_channel_only_of: a channel is told of the site and of no other
// (a local channel of the local site, a channel of some sites whose only
// site it is); the fleet's and one of several sites are no site's alone,
// nor is one left without sites.
func testChannelOnlyOf(t *testing.T, f *fdb) {
	f.exec(t, `INSERT INTO sites (id, name, token_hash) VALUES (2, 'shop', sha256('a')), (3, 'blog', sha256('b'))`)
	f.exec(t, `INSERT INTO notification_channels (id, name, kind, target, events, scope) VALUES
		(1, 'local', 'webhook', 'https://hooks.example/1', 'security', 'local'),
		(2, 'shop', 'webhook', 'https://hooks.example/2', 'security', 'sites'),
		(3, 'fleet', 'webhook', 'https://hooks.example/3', 'security', 'fleet'),
		(4, 'shop and local', 'webhook', 'https://hooks.example/4', 'security', 'sites'),
		(5, 'local named', 'webhook', 'https://hooks.example/5', 'security', 'sites'),
		(6, 'none left', 'webhook', 'https://hooks.example/6', 'security', 'sites')`)
	f.exec(t, `INSERT INTO notification_channel_sites (channel_id, site_id) VALUES (2, 2), (4, 2), (4, 1), (5, 1)`)
	for _, c := range []struct {
		channel int64
		of      string
	}{{1, "1"}, {2, "2"}, {3, ""}, {4, ""}, {5, "1"}, {6, ""}} {
		got := f.text(t, `SELECT coalesce(string_agg(s.id::text, ',' ORDER BY s.id), '') FROM sites s, notification_channels ch
			WHERE ch.id = $1 AND upcheck_channel_only_of(ch.scope, ch.id, s.id)`, c.channel)
		if got != c.of {
			t.Errorf("channel %d is of sites %q alone, want %q", c.channel, got, c.of)
		}
	}
}

// upcheck_sites_nothing_to_queue raises UN001 when an enabled channel of
// some sites or of the fleet sees a registered site whose given
// component's stored result calls for an event the channel lacks (a
// channel of the fleet: not told of the site; of some sites: no event of
// the site's key), and not without such a channel (a local one, a
// disabled one, one of another site), for an update on a channel of
// security problems alone, or once the channel has it.
func testSitesNothingToQueue(t *testing.T, f *fdb) {
	f.exec(t, `INSERT INTO sites (id, name, token_hash) VALUES (2, 'shop', sha256('a')), (3, 'blog', sha256('b'))`)
	f.exec(t, `INSERT INTO component_results (site_id, code, source_url, installed_version, core_version, document_hash, epoch,
			update_available, update_version)
		VALUES (2, 'widget', 'npm:widget', '1.0.0', '', sha256('doc'), 1, true, '1.1.0'),
		       (2, 'calm', 'npm:calm', '1.0.0', '', sha256('doc'), 1, false, NULL)`)
	ask := func(code string) string {
		t.Helper()
		_, err := f.Pool.Exec(t.Context(), `SELECT upcheck_sites_nothing_to_queue($1, $2)`, []int64{2}, []string{code})
		if err != nil && sqlState(err) == "" {
			t.Fatal(err)
		}
		return sqlState(err)
	}
	if got := ask("widget"); got != "" {
		t.Errorf("no channel: SQLSTATE %q, want none", got)
	}
	f.exec(t, `INSERT INTO notification_channels (id, name, kind, target, events, scope) VALUES
		(1, 'local', 'webhook', 'https://hooks.example/1', 'all', 'local'),
		(2, 'blog', 'webhook', 'https://hooks.example/2', 'all', 'sites'),
		(3, 'fleet', 'webhook', 'https://hooks.example/3', 'security', 'fleet'),
		(4, 'shop', 'webhook', 'https://hooks.example/4', 'all', 'sites')`)
	f.exec(t, `INSERT INTO notification_channel_sites (channel_id, site_id) VALUES (2, 3), (4, 2)`)
	f.exec(t, `UPDATE notification_channels SET enabled = (id IN (1, 2))`)
	if got := ask("widget"); got != "" {
		t.Errorf("a local channel and blog's: SQLSTATE %q, want none (neither sees shop)", got)
	}
	f.exec(t, `UPDATE notification_channels SET enabled = (id = 3)`)
	if got := ask("widget"); got != "" {
		t.Errorf("a channel of the fleet, of security problems, and an update: SQLSTATE %q, want none", got)
	}
	f.exec(t, `UPDATE notification_channels SET events = 'all' WHERE id = 3`)
	if got := ask("widget"); got != store.SQLStateEventsToQueue {
		t.Errorf("a channel of the fleet not told of shop's update: SQLSTATE %q, want %s", got, store.SQLStateEventsToQueue)
	}
	f.exec(t, `INSERT INTO notification_fleet_component_told (channel_id, fact, site_id) VALUES (3, 'update.available:widget@1.1.0', 2)`)
	if got := ask("widget"); got != "" {
		t.Errorf("a channel of the fleet told of it: SQLSTATE %q, want none", got)
	}
	f.exec(t, `UPDATE notification_channels SET enabled = (id = 4)`)
	if got := ask("widget"); got != store.SQLStateEventsToQueue {
		t.Errorf("shop's channel without the event: SQLSTATE %q, want %s", got, store.SQLStateEventsToQueue)
	}
	f.exec(t, `INSERT INTO notification_events (id, channel_id, key, type, payload)
		VALUES (gen_random_uuid(), 4, 'update.available@shop:widget@1.1.0', 'update.available', '{}')`)
	if got := ask("widget"); got != "" {
		t.Errorf("shop's channel with the event: SQLSTATE %q, want none", got)
	}
	if got := ask("calm"); got != "" {
		t.Errorf("a result that calls for no event: SQLSTATE %q, want none", got)
	}
}
