package store_test

import (
	"context"
	"testing"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

// askNothingToQueue asks upcheck_nothing_to_queue about codes: the
// SQLSTATE it raised, "" for none.
func askNothingToQueue(t *testing.T, f *fdb) func(codes ...string) string {
	return func(codes ...string) string {
		t.Helper()
		_, err := f.Pool.Exec(t.Context(), `SELECT upcheck_nothing_to_queue($1)`, codes)
		if err != nil && sqlState(err) == "" {
			t.Fatal(err)
		}
		return sqlState(err)
	}
}

// upcheck_nothing_to_queue raises UN001 while an enabled channel may lack
// an event the given components call for (a security release, an
// unfixed advisory, and for an "all" channel an update), and nothing once
// the channel has each, for a disabled channel, without a channel, or for
// components that call for none.
func testNothingToQueue(t *testing.T, f *fdb) {
	t.Run("under another id", func(t *testing.T) {
		t.Parallel()
		testNothingToQueueUnderAnotherID(t, &fdb{pgtest.New(t)})
	})
	t.Run("no channel: no result read", func(t *testing.T) {
		t.Parallel()
		testNothingToQueueWithoutChannels(t, &fdb{pgtest.New(t)})
	})
	ask := askNothingToQueue(t, f)
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

// An advisory's event is not missing when the channel has an event of its
// scope (type, component, and the installed version where the key has it)
// whose keys share one with the advisory's id and aliases, whatever the
// case: the advisory came back under another id (EventPlan queues nothing
// for it). It is missing for another scope (component, installed version,
// type), another channel, an unrelated advisory, and an id the result's
// JSON does not have.
func testNothingToQueueUnderAnotherID(t *testing.T, f *fdb) {
	ask := askNothingToQueue(t, f)
	f.exec(t, `INSERT INTO notification_channels (id, name, kind, target, events) VALUES (1, 'ops', 'webhook', 'https://hooks.example/x', 'security')`)
	// gallery's exploited ACME-1 (CVE-X) is now GHSA-Y listing both;
	// forms's malicious MAL-1 is now GHSA-M listing it; wiki's unfixed
	// ACME-2 is now GHSA-Z listing it.
	f.exec(t, `INSERT INTO component_results (code, source_url, installed_version, core_version, document_hash, epoch,
			advisories, advisory_ids, no_fix_ids, exploited_ids, malicious_ids)
		VALUES ('gallery', 'https://p.example/a.json', '3.0.0', '1.0.0', sha256('doc'), 1,
		        '[{"id": "GHSA-Y", "aliases": ["ACME-1", "cve-x"], "no_fix": true, "known_exploited": true}]',
		        '{GHSA-Y}', '{GHSA-Y}', '{GHSA-Y}', '{}'),
		       ('forms', 'https://p.example/a.json', '1.0.0', '1.0.0', sha256('doc'), 1,
		        '[{"id": "GHSA-M", "aliases": ["mal-1"], "no_fix": true, "malicious": true}]',
		        '{GHSA-M}', '{GHSA-M}', '{}', '{GHSA-M}'),
		       ('wiki', 'https://p.example/a.json', '3.0.0', '1.0.0', sha256('doc'), 1,
		        '[{"id": "GHSA-Z", "aliases": ["ACME-2"], "no_fix": true}]',
		        '{GHSA-Z}', '{GHSA-Z}', '{}', '{}')`)
	if got := ask("gallery", "forms", "wiki"); got != store.SQLStateEventsToQueue {
		t.Fatalf("no events: SQLSTATE %q, want %s", got, store.SQLStateEventsToQueue)
	}
	f.exec(t, `INSERT INTO notification_events (id, channel_id, key, type, payload, advisory_scope, advisory_keys) VALUES
		(gen_random_uuid(), 1, 'advisory.exploited:gallery/ACME-1', 'advisory.exploited', '{}', 'advisory.exploited:gallery', '{ACME-1,CVE-X}'),
		(gen_random_uuid(), 1, 'malicious_package:forms@1.0.0/MAL-1', 'malicious_package', '{}', 'malicious_package:forms@1.0.0', '{MAL-1}'),
		(gen_random_uuid(), 1, 'advisory.unfixed:wiki@2.0.0/ACME-2', 'advisory.unfixed', '{}', 'advisory.unfixed:wiki@2.0.0', '{ACME-2}')`)
	for _, code := range []string{"gallery", "forms"} {
		if got := ask(code); got != "" {
			t.Errorf("%s's advisory under another id, its event stored: SQLSTATE %q, want none", code, got)
		}
	}
	if got := ask("wiki"); got != store.SQLStateEventsToQueue {
		t.Errorf("wiki's unfixed advisory notified for another installed version only: SQLSTATE %q, want %s", got, store.SQLStateEventsToQueue)
	}
	f.exec(t, `INSERT INTO notification_events (id, channel_id, key, type, payload, advisory_scope, advisory_keys) VALUES
		(gen_random_uuid(), 1, 'advisory.exploited:wiki/ACME-2', 'advisory.exploited', '{}', 'advisory.exploited:wiki', '{ACME-2}'),
		(gen_random_uuid(), 1, 'advisory.unfixed:gallery@3.0.0/X', 'advisory.unfixed', '{}', 'advisory.unfixed:gallery@3.0.0', '{X}')`)
	if got := ask("wiki"); got != store.SQLStateEventsToQueue {
		t.Errorf("wiki's unfixed advisory notified as exploited only: SQLSTATE %q, want %s", got, store.SQLStateEventsToQueue)
	}
	f.exec(t, `INSERT INTO notification_events (id, channel_id, key, type, payload, advisory_scope, advisory_keys) VALUES
		(gen_random_uuid(), 1, 'advisory.unfixed:wiki@3.0.0/ACME-2', 'advisory.unfixed', '{}', 'advisory.unfixed:wiki@3.0.0', '{ACME-2}')`)
	if got := ask("gallery", "forms", "wiki"); got != "" {
		t.Errorf("each advisory's event stored under its old id: SQLSTATE %q, want none", got)
	}
	// A new installed version is another scope for a malicious package.
	f.exec(t, `UPDATE component_results SET installed_version = '1.0.1' WHERE code = 'forms'`)
	if got := ask("forms"); got != store.SQLStateEventsToQueue {
		t.Errorf("forms malicious at a new installed version: SQLSTATE %q, want %s", got, store.SQLStateEventsToQueue)
	}
	f.exec(t, `UPDATE component_results SET installed_version = '1.0.0' WHERE code = 'forms'`)
	// An unrelated advisory beside the renamed one.
	f.exec(t, `UPDATE component_results SET
		advisories = advisories || '[{"id": "ACME-5", "aliases": ["CVE-Z"], "no_fix": true, "known_exploited": true}]',
		advisory_ids = '{GHSA-Y,ACME-5}', no_fix_ids = '{GHSA-Y,ACME-5}', exploited_ids = '{GHSA-Y,ACME-5}' WHERE code = 'gallery'`)
	if got := ask("gallery"); got != store.SQLStateEventsToQueue {
		t.Errorf("an unrelated exploited advisory: SQLSTATE %q, want %s", got, store.SQLStateEventsToQueue)
	}
	f.exec(t, `UPDATE component_results SET advisories = '[{"id": "GHSA-Y", "aliases": ["ACME-1", "cve-x"], "no_fix": true, "known_exploited": true}]',
		advisory_ids = '{GHSA-Y}', no_fix_ids = '{GHSA-Y}', exploited_ids = '{GHSA-Y}' WHERE code = 'gallery'`)
	if got := ask("gallery"); got != "" {
		t.Fatalf("gallery back to its renamed advisory: SQLSTATE %q, want none", got)
	}
	// An id that the result's JSON lacks cannot be compared: missing.
	f.exec(t, `UPDATE component_results SET exploited_ids = '{GHSA-Y,ACME-6}' WHERE code = 'gallery'`)
	if got := ask("gallery"); got != store.SQLStateEventsToQueue {
		t.Errorf("an exploited id without its advisory: SQLSTATE %q, want %s", got, store.SQLStateEventsToQueue)
	}
	f.exec(t, `UPDATE component_results SET exploited_ids = '{GHSA-Y}' WHERE code = 'gallery'`)
	// Another channel has none of the events.
	f.exec(t, `INSERT INTO notification_channels (id, name, kind, target, events) VALUES (2, 'chat', 'slack', 'https://hooks.example/y', 'security')`)
	if got := ask("gallery"); got != store.SQLStateEventsToQueue {
		t.Errorf("a second channel without gallery's event: SQLSTATE %q, want %s", got, store.SQLStateEventsToQueue)
	}
}

// Without an enabled channel the question is answered without reading a
// result: a check's every pipelined write asks it, inside the lease's
// lock, and a site without channels (the bench's) paid for eight lookups
// of each component (docs/performance.md). Shown by a session holding
// component_results locked: the question must not wait for it.
func testNothingToQueueWithoutChannels(t *testing.T, f *fdb) {
	ctx := t.Context()
	f.exec(t, `INSERT INTO component_results (code, source_url, installed_version, core_version, document_hash, epoch,
			security, security_version, update_available, update_version, no_fix_ids)
		VALUES ('blog', 'https://p.example/a.json', '2.3.0', '1.0.0', sha256('doc'), 1, true, '2.4.1', true, '2.5.0', '{ACME-1}')`)
	f.exec(t, `INSERT INTO notification_channels (id, name, kind, target, events, enabled) VALUES (1, 'ops', 'webhook', 'https://hooks.example/x', 'all', false)`)
	locker, err := f.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Rollback(context.WithoutCancel(ctx))
	if _, err := locker.Exec(ctx, `LOCK TABLE component_results IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	ask := func() error {
		tx, err := f.Pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(context.WithoutCancel(ctx))
		// A lock wait fails at once instead of waiting for the locker.
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '1ms'`); err != nil {
			t.Fatal(err)
		}
		_, err = tx.Exec(ctx, `SELECT upcheck_nothing_to_queue($1)`, []string{"blog"})
		return err
	}
	if err := ask(); err != nil {
		t.Errorf("a disabled channel only: %v (SQLSTATE %q), want an answer without reading component_results", err, sqlState(err))
	}
	f.exec(t, `UPDATE notification_channels SET enabled = true`)
	if err := ask(); sqlState(err) != "55P03" {
		t.Errorf("an enabled channel: %v, want the results read (a lock timeout behind the locker)", err)
	}
}
