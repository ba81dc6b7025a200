package store_test

import (
	"testing"

	"github.com/upcheck/upcheck/internal/store"
)

// upcheck_nothing_to_queue raises UN001 while an enabled channel may lack
// an event the given components call for (a security release, an
// unfixed advisory, and for an "all" channel an update), and nothing once
// the channel has each, for a disabled channel, without a channel, or for
// components that call for none.
func testNothingToQueue(t *testing.T, f *fdb) {
	ask := func(codes ...string) string {
		t.Helper()
		_, err := f.Pool.Exec(t.Context(), `SELECT upcheck_nothing_to_queue($1)`, codes)
		if err != nil && sqlState(err) == "" {
			t.Fatal(err)
		}
		return sqlState(err)
	}
	f.exec(t, `INSERT INTO component_results (code, source_url, installed_version, core_version, document_hash, epoch,
			security, security_version, update_available, update_version, no_fix_ids)
		VALUES ('blog', 'https://p.example/a.json', '2.3.0', '1.0.0', sha256('doc'), 1, true, '2.4.1', true, '2.5.0', '{ACME-1}'),
		       ('shop', 'https://p.example/a.json', '1.0.0', '1.0.0', sha256('doc'), 1, false, NULL, true, '1.1.0', '{}'),
		       ('wiki', 'https://p.example/a.json', '3.0.0', '1.0.0', sha256('doc'), 1, false, NULL, false, NULL, '{}')`)
	if got := ask("blog", "shop"); got != "" {
		t.Errorf("no channel: SQLSTATE %q, want none", got)
	}
	f.exec(t, `INSERT INTO notification_channels (id, name, kind, target, events) VALUES (1, 'ops', 'webhook', 'https://hooks.example/x', 'security')`)
	if got := ask("blog"); got != store.SQLStateEventsToQueue {
		t.Errorf("a security channel without blog's events: SQLSTATE %q, want %s", got, store.SQLStateEventsToQueue)
	}
	if got := ask("shop", "wiki"); got != "" {
		t.Errorf("a security channel, an update alone: SQLSTATE %q, want none", got)
	}
	f.exec(t, `INSERT INTO notification_events (id, channel_id, key, type, payload) VALUES
		(gen_random_uuid(), 1, 'security_update.available:blog@2.4.1', 'security_update.available', '{}')`)
	if got := ask("blog"); got != store.SQLStateEventsToQueue {
		t.Errorf("the unfixed advisory's event missing: SQLSTATE %q, want %s", got, store.SQLStateEventsToQueue)
	}
	f.exec(t, `INSERT INTO notification_events (id, channel_id, key, type, payload) VALUES
		(gen_random_uuid(), 1, 'advisory.unfixed:blog@2.3.0/ACME-1', 'advisory.unfixed', '{}')`)
	if got := ask("blog", "shop", "wiki"); got != "" {
		t.Errorf("a security channel with each of blog's events: SQLSTATE %q, want none", got)
	}
	// A deprecated installed version and a trust downgrade call for
	// events on a security channel too.
	f.exec(t, `UPDATE component_results SET deprecated = 'use shop2', provenance_lost = '1.1.0' WHERE code = 'wiki'`)
	if got := ask("wiki"); got != store.SQLStateEventsToQueue {
		t.Errorf("wiki deprecated and downgraded, no events: SQLSTATE %q, want %s", got, store.SQLStateEventsToQueue)
	}
	f.exec(t, `INSERT INTO notification_events (id, channel_id, key, type, payload) VALUES
		(gen_random_uuid(), 1, 'deprecated:wiki@3.0.0', 'deprecated', '{}')`)
	if got := ask("wiki"); got != store.SQLStateEventsToQueue {
		t.Errorf("wiki's downgrade without its event: SQLSTATE %q, want %s", got, store.SQLStateEventsToQueue)
	}
	// The provenance.lost event of before does not stand for the
	// trust_downgrade one that replaced it.
	f.exec(t, `INSERT INTO notification_events (id, channel_id, key, type, payload) VALUES
		(gen_random_uuid(), 1, 'provenance.lost:wiki@1.1.0', 'provenance.lost', '{}')`)
	if got := ask("wiki"); got != store.SQLStateEventsToQueue {
		t.Errorf("wiki's downgrade with a provenance.lost event only: SQLSTATE %q, want %s", got, store.SQLStateEventsToQueue)
	}
	f.exec(t, `INSERT INTO notification_events (id, channel_id, key, type, payload) VALUES
		(gen_random_uuid(), 1, 'trust_downgrade:wiki@1.1.0/provenance_lost', 'trust_downgrade', '{}')`)
	if got := ask("wiki"); got != "" {
		t.Errorf("wiki with each of its events: SQLSTATE %q, want none", got)
	}
	// An offered version by an account new to the package calls for its
	// own trust_downgrade event.
	f.exec(t, `UPDATE component_results SET new_publisher_version = '1.1.0', new_publisher = 'mallory' WHERE code = 'wiki'`)
	if got := ask("wiki"); got != store.SQLStateEventsToQueue {
		t.Errorf("wiki's new publisher without its event: SQLSTATE %q, want %s", got, store.SQLStateEventsToQueue)
	}
	f.exec(t, `INSERT INTO notification_events (id, channel_id, key, type, payload) VALUES
		(gen_random_uuid(), 1, 'trust_downgrade:wiki@1.1.0/new_publisher', 'trust_downgrade', '{}')`)
	if got := ask("wiki"); got != "" {
		t.Errorf("wiki with each of its events, the new publisher's too: SQLSTATE %q, want none", got)
	}
	f.exec(t, `UPDATE notification_channels SET events = 'all'`)
	if got := ask("shop"); got != store.SQLStateEventsToQueue {
		t.Errorf("an all channel without shop's update: SQLSTATE %q, want %s", got, store.SQLStateEventsToQueue)
	}
	if got := ask("wiki"); got != "" {
		t.Errorf("an all channel, wiki up to date: SQLSTATE %q, want none", got)
	}
	f.exec(t, `UPDATE notification_channels SET enabled = false`)
	if got := ask("blog", "shop"); got != "" {
		t.Errorf("a disabled channel: SQLSTATE %q, want none", got)
	}
	if got := ask(); got != "" {
		t.Errorf("no component: SQLSTATE %q, want none", got)
	}
}
