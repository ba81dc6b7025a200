package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// NewChannel is a channel to create; Secret only for webhooks. MinEPSS is
// its EPSS threshold (0 to 1; nil: none).
type NewChannel struct {
	Name, Kind, Target, Events, Secret string
	MinEPSS                            *float64
	// Scope is which sites the channel is told of ("": the local site);
	// SiteIDs are the sites of a readmodel.ScopeSites channel.
	Scope   readmodel.ChannelScope
	SiteIDs []int64
}

// float8 is an optional float as pgx writes it.
func float8(f *float64) pgtype.Float8 {
	if f == nil {
		return pgtype.Float8{}
	}
	return pgtype.Float8{Float64: *f, Valid: true}
}

// floatOf is an optional float as pgx read it.
func floatOf(f pgtype.Float8) *float64 {
	if !f.Valid {
		return nil
	}
	return &f.Float64
}

// Delivery is one event as its sender needs it.
type Delivery struct {
	ID          uuid.UUID
	Type        string
	Payload     []byte // JSON
	State       string // pending, delivered or failed
	Attempts    int
	CreatedAt   time.Time
	Channel     readmodel.ChannelRow
	Secret      string
	ChannelLive bool // the channel exists and is enabled
}

// Pgx is the transaction as pgx sees it, for River's InsertTx alone: a
// delivery job must commit with the event it delivers, in the same
// transaction, or not at all.
func (t *Tx) Pgx() pgx.Tx { return t.tx }

// ChannelCreate creates a channel and returns its id.
func (t *Tx) ChannelCreate(ctx context.Context, c NewChannel) (int64, error) {
	scope := c.Scope
	if scope == "" {
		scope = readmodel.ScopeLocal
	}
	id, err := t.q.ChannelCreate(ctx, t.tx, db.ChannelCreateParams{Name: c.Name, Kind: c.Kind, Target: c.Target, Events: c.Events, Secret: ref(c.Secret),
		MinEpss: float8(c.MinEPSS), Scope: string(scope)})
	if err != nil {
		return 0, mapError(err)
	}
	if scope == readmodel.ScopeSites {
		if err := t.q.ChannelSitesAdd(ctx, t.tx, db.ChannelSitesAddParams{ChannelID: id, Sites: c.SiteIDs}); err != nil {
			return 0, mapError(fmt.Errorf("write the channel's sites: %w", err))
		}
	}
	return id, nil
}

// Channels lists every channel.
func (e *Executor) Channels(ctx context.Context) ([]readmodel.ChannelRow, error) {
	rows, err := e.q.ChannelList(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(fmt.Errorf("list channels: %w", err))
	}
	out := make([]readmodel.ChannelRow, len(rows))
	for i, r := range rows {
		out[i] = readmodel.ChannelRow{ID: r.ID, Name: r.Name, Kind: r.Kind, Target: r.Target, Events: r.Events, MinEPSS: floatOf(r.MinEpss),
			Enabled: r.Enabled, DisabledReason: deref(r.DisabledReason), CreatedAt: r.CreatedAt,
			Scope: readmodel.ChannelScope(r.Scope), SiteIDs: r.SiteIds, Sites: r.SiteNames}
	}
	return out, nil
}

// ChannelDelete deletes a channel and its events; ErrNotFound when there is
// none.
func (e *Executor) ChannelDelete(ctx context.Context, id int64) error {
	n, err := e.q.ChannelDelete(ctx, e.dbtx, id)
	if err == nil && n == 0 {
		return ErrNotFound
	}
	return mapError(err)
}

// ChannelDisable turns a channel off, saying why.
func (e *Executor) ChannelDisable(ctx context.Context, id int64, reason string) error {
	_, err := e.q.ChannelDisable(ctx, e.dbtx, db.ChannelDisableParams{ID: id, Reason: &reason})
	return mapError(err)
}

// EventPlan queues, in the transaction, the events the current state of
// site's components codes calls for (every one when codes is nil), for every enabled
// channel or only channelID; epoch is the queuing check's (0: none). It
// returns the ids of the events queued now; events a channel already has
// are never queued again.
func (t *Tx) EventPlan(ctx context.Context, site int64, codes []string, channelID, epoch int64) ([]uuid.UUID, error) {
	if codes == nil {
		all, err := t.q.ComponentCodes(ctx, t.tx, site)
		if err != nil {
			return nil, mapError(err)
		}
		codes = all
	}
	p := db.EventPlanParams{Site: site, Codes: orNoStrings(codes)}
	if channelID != 0 {
		p.ChannelID = &channelID
	}
	if epoch != 0 {
		p.Epoch = &epoch
	}
	ids, err := t.q.EventPlan(ctx, t.tx, p)
	return ids, mapError(err)
}

// EventCreateTest queues a test event for a channel.
func (t *Tx) EventCreateTest(ctx context.Context, channelID int64) (uuid.UUID, error) {
	id, err := t.q.EventCreateTest(ctx, t.tx, db.EventCreateTestParams{ID: uuid.New(), ChannelID: channelID})
	return id, mapError(err)
}

// EventRetry puts a failed event back to pending; ErrNotFound when there is
// no failed event with that id.
func (t *Tx) EventRetry(ctx context.Context, id uuid.UUID) error {
	n, err := t.q.EventRetry(ctx, t.tx, id)
	if err == nil && n == 0 {
		return ErrNotFound
	}
	return mapError(err)
}

// Delivery reads one event and its channel; ErrNotFound when the event (or
// its channel) was deleted.
func (e *Executor) Delivery(ctx context.Context, id uuid.UUID) (Delivery, error) {
	r, err := e.q.EventForDelivery(ctx, e.dbtx, id)
	if err != nil {
		return Delivery{}, mapError(err)
	}
	return Delivery{
		ID: r.ID, Type: r.Type, Payload: r.Payload, State: r.State, Attempts: int(r.Attempts), CreatedAt: r.CreatedAt,
		Channel: readmodel.ChannelRow{ID: r.ChannelID, Name: r.ChannelName, Kind: r.Kind, Target: r.Target, Enabled: r.Enabled},
		Secret:  deref(r.Secret), ChannelLive: r.Enabled,
	}, nil
}

// EventRecordAttempt records how one send ended: state is delivered,
// pending (to be tried again, in retryIn) or failed (that was the last
// attempt).
func (e *Executor) EventRecordAttempt(ctx context.Context, id uuid.UUID, state, message string, retryIn time.Duration) error {
	return mapError(e.q.EventRecordAttempt(ctx, e.dbtx, db.EventRecordAttemptParams{
		ID: id, State: state, Error: ref(message), RetryInSeconds: retryIn.Seconds(),
	}))
}

// Events lists the newest events, up to limit.
func (e *Executor) Events(ctx context.Context, limit int) ([]readmodel.DeliveryRow, error) {
	rows, err := e.q.EventList(ctx, e.dbtx, int32(limit))
	if err != nil {
		return nil, mapError(fmt.Errorf("list events: %w", err))
	}
	out := make([]readmodel.DeliveryRow, len(rows))
	for i, r := range rows {
		out[i] = readmodel.DeliveryRow{ID: r.ID, ChannelID: r.ChannelID, ChannelName: r.ChannelName, Type: r.Type, Key: r.Key, State: r.State,
			Attempts: int(r.Attempts), LastError: deref(r.LastError), LastAttemptAt: r.LastAttemptAt,
			DeliveredAt: r.DeliveredAt, NextAttemptAt: r.NextAttemptAt, CreatedAt: r.CreatedAt, MessageID: r.MessageID.UUID,
			HeldAt: r.HeldAt}
	}
	return out, nil
}

// EventPlanSourceFailing queues, in the transaction, a source.failing event
// when the source at url has been failing for 24 hours; once per episode.
func (t *Tx) EventPlanSourceFailing(ctx context.Context, url string, epoch int64) ([]uuid.UUID, error) {
	p := db.EventPlanSourceFailingParams{Url: url}
	if epoch != 0 {
		p.Epoch = &epoch
	}
	ids, err := t.q.EventPlanSourceFailing(ctx, t.tx, p)
	return ids, mapError(err)
}

// EventPlanOverdue queues a check.overdue event when no check completed for
// 48 hours; once per last completion.
func (t *Tx) EventPlanOverdue(ctx context.Context) ([]uuid.UUID, error) {
	ids, err := t.q.EventPlanOverdue(ctx, t.tx)
	return ids, mapError(err)
}

// ChannelSetEnabled turns a channel on or off; ErrNotFound when there is
// none.
func (t *Tx) ChannelSetEnabled(ctx context.Context, id int64, enabled bool) error {
	n, err := t.q.ChannelSetEnabled(ctx, t.tx, db.ChannelSetEnabledParams{ID: id, Enabled: enabled})
	if err == nil && n == 0 {
		return ErrNotFound
	}
	return mapError(err)
}

// Channel reads one channel; ErrNotFound when there is none.
func (e *Executor) Channel(ctx context.Context, id int64) (readmodel.ChannelRow, error) {
	r, err := e.q.ChannelGet(ctx, e.dbtx, id)
	if err != nil {
		return readmodel.ChannelRow{}, mapError(err)
	}
	return readmodel.ChannelRow{ID: r.ID, Name: r.Name, Kind: r.Kind, Target: r.Target, Events: r.Events, MinEPSS: floatOf(r.MinEpss),
		Enabled: r.Enabled, DisabledReason: deref(r.DisabledReason), CreatedAt: r.CreatedAt,
		Scope: readmodel.ChannelScope(r.Scope), SiteIDs: r.SiteIds, Sites: r.SiteNames}, nil
}

// EventChannel is the channel of an event; ErrNotFound when there is no
// such event.
func (e *Executor) EventChannel(ctx context.Context, id uuid.UUID) (int64, error) {
	ch, err := e.q.EventChannel(ctx, e.dbtx, id)
	return ch, mapError(err)
}

// EventHold holds a pending event whose channel is disabled: it stays
// pending, without a job, until the channel is enabled. It reports false
// when the channel is enabled (an enable committed meanwhile) or the event
// is not pending: then the caller sends, or stops, as the event now says.
func (e *Executor) EventHold(ctx context.Context, id uuid.UUID) (bool, error) {
	n, err := e.q.EventHold(ctx, e.dbtx, id)
	return n > 0, mapError(err)
}

// EventReleaseHeld makes the held events of enabled channels (every one
// when channelID is 0) that are sent alone pending again, and returns
// them: each needs one new job, inserted in the same transaction.
func (t *Tx) EventReleaseHeld(ctx context.Context, channelID int64) ([]uuid.UUID, error) {
	ids, err := t.q.EventReleaseHeld(ctx, t.tx, optionalID(channelID))
	return ids, mapError(err)
}
