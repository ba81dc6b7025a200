package store_test

import (
	"context"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// A site's summary counts the deliveries of the channels told of that
// site alone (upcheck_channel_only_of): the local site's, its local
// channel's, not a channel's of another site, of several sites or of the
// fleet, so that a viewer limited to the local site learns nothing of
// another site's failing channel from the counts; a registered site's,
// its own channel's.
func TestSummaryCountsTheSitesChannels(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.exec(t, `INSERT INTO sites (id, name, token_hash) VALUES (2, 'shop', sha256('a'))`)
	b.exec(t, `INSERT INTO notification_channels (id, name, kind, target, events, scope) VALUES
		(1, 'local', 'webhook', 'https://hooks.example/1', 'security', 'local'),
		(2, 'shop', 'webhook', 'https://hooks.example/2', 'security', 'sites'),
		(3, 'fleet', 'webhook', 'https://hooks.example/3', 'security', 'fleet'),
		(4, 'both', 'webhook', 'https://hooks.example/4', 'security', 'sites')`)
	b.exec(t, `INSERT INTO notification_channel_sites (channel_id, site_id) VALUES (2, 2), (4, 1), (4, 2)`)
	// Each channel: one event failing, one pending; the local channel
	// and shop's one more failing.
	b.exec(t, `INSERT INTO notification_events (id, channel_id, key, type, payload, state, last_error, created_at)
		SELECT gen_random_uuid(), c, 'k' || n, 'test', '{}', s, e, now() - interval '1 hour' * c
		FROM generate_series(1, 4) c, (VALUES (1, 'failed', 'boom'), (2, 'pending', NULL), (3, 'pending', 'timeout')) v(n, s, e)
		WHERE n < 3 OR c IN (1, 2)`)
	for site, want := range map[int64][3]int{store.LocalSite: {2, 2, 3600}, 2: {2, 2, 7200}} {
		sum, err := b.st.Summary(context.Background(), site, readmodel.DevSeparate)
		if err != nil {
			t.Fatal(err)
		}
		if sum.NotificationsFailing != want[0] || sum.NotificationsPending != want[1] || int(sum.OldestPendingSeconds)/60 != want[2]/60 {
			t.Errorf("site %d: failing %d, pending %d, oldest %.0f s; want %v", site, sum.NotificationsFailing, sum.NotificationsPending,
				sum.OldestPendingSeconds, want)
		}
	}
}
