package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// messageGatherLock is the transaction-level advisory lock that gatherings
// of email events take in turn ("upchmsgs").
const messageGatherLock int64 = 0x75706368_6d736773

// Message is one email message as its sender needs it: its channel and the
// events it covers.
type Message struct {
	ID        uuid.UUID
	Key       string // hex SHA-256 of the sorted keys of its events
	State     string // pending, delivered or failed
	Attempts  int
	CreatedAt time.Time
	Channel   readmodel.ChannelRow // Enabled is false when the channel was disabled
	Events    []MessageEvent
}

// MessageEvent is one event of a message.
type MessageEvent struct {
	ID        uuid.UUID
	Type, Key string
	Payload   []byte // JSON
	CreatedAt time.Time
}

// MessageGather gathers, in the transaction, the pending events of email
// channels (every one, or only channelID when not 0) that are in no message
// yet into one new message per channel, and returns the new messages' ids.
// Events queued by the check that holds the lease now are left for that
// check's end unless includeRunning. Gatherings take turns on an advisory
// lock, taken here first.
func (t *Tx) MessageGather(ctx context.Context, channelID int64, includeRunning bool) ([]uuid.UUID, error) {
	if err := t.q.MessageGatherLock(ctx, t.tx, messageGatherLock); err != nil {
		return nil, mapError(fmt.Errorf("gather messages: %w", err))
	}
	p := db.MessageGatherParams{IncludeRunning: includeRunning}
	if channelID != 0 {
		p.ChannelID = &channelID
	}
	ids, err := t.q.MessageGather(ctx, t.tx, p)
	if err != nil {
		return nil, mapError(fmt.Errorf("gather messages: %w", err))
	}
	return ids, nil
}

// Message reads one message, its channel and its events; ErrNotFound when
// it was deleted with its channel.
func (e *Executor) Message(ctx context.Context, id uuid.UUID) (Message, error) {
	r, err := e.q.MessageForSend(ctx, e.dbtx, id)
	if err != nil {
		return Message{}, mapError(err)
	}
	rows, err := e.q.MessageEvents(ctx, e.dbtx, id)
	if err != nil {
		return Message{}, mapError(fmt.Errorf("events of message %s: %w", id, err))
	}
	m := Message{
		ID: r.ID, Key: r.Key, State: r.State, Attempts: int(r.Attempts), CreatedAt: r.CreatedAt,
		Channel: readmodel.ChannelRow{ID: r.ChannelID, Name: r.ChannelName, Kind: r.Kind, Target: r.Target, Enabled: r.Enabled,
			CreatedAt: r.ChannelCreatedAt},
		Events: make([]MessageEvent, len(rows)),
	}
	for i, e := range rows {
		m.Events[i] = MessageEvent{ID: e.ID, Type: e.Type, Key: e.Key, Payload: e.Payload, CreatedAt: e.CreatedAt}
	}
	return m, nil
}

// MessageRecordAttempt records how one send of a message ended, on the
// message and on each of its events: state is delivered, pending (to be
// tried again) or failed (that was the last attempt).
func (e *Executor) MessageRecordAttempt(ctx context.Context, id uuid.UUID, state, message string) error {
	err := e.q.MessageRecordAttempt(ctx, e.dbtx, db.MessageRecordAttemptParams{ID: id, State: state, Error: ref(message)})
	return mapError(err)
}

// MessageRetry puts the failed message of an event back to pending, with
// its failed events, and returns the message's id; uuid.Nil when the event
// is in no failed message.
func (t *Tx) MessageRetry(ctx context.Context, eventID uuid.UUID) (uuid.UUID, error) {
	id, err := t.q.MessageRetry(ctx, t.tx, eventID)
	if err != nil {
		if err = mapError(err); errors.Is(err, ErrNotFound) {
			return uuid.Nil, nil
		}
		return uuid.Nil, err
	}
	return id, nil
}

// EventSentAlone returns the events among ids that are sent one by one
// (those of webhook and slack channels); an email channel's events wait to
// be gathered into a message.
func (e *Executor) EventSentAlone(ctx context.Context, ids []uuid.UUID) ([]uuid.UUID, error) {
	out, err := e.q.EventSentAlone(ctx, e.dbtx, ids)
	return out, mapError(err)
}

// MessageHold holds a pending message whose channel is disabled, with its
// events, as EventHold does an event.
func (e *Executor) MessageHold(ctx context.Context, id uuid.UUID) (bool, error) {
	n, err := e.q.MessageHold(ctx, e.dbtx, id)
	return n > 0, mapError(err)
}

// MessageReleaseHeld makes the held messages of enabled channels (every
// one when channelID is 0) pending again, with their events, and returns
// them and how many events they cover: each needs one new job, inserted in
// the same transaction.
func (t *Tx) MessageReleaseHeld(ctx context.Context, channelID int64) ([]uuid.UUID, int, error) {
	rows, err := t.q.MessageReleaseHeld(ctx, t.tx, optionalID(channelID))
	if err != nil {
		return nil, 0, mapError(err)
	}
	ids, events := make([]uuid.UUID, len(rows)), 0
	for i, r := range rows {
		ids[i] = r.ID
		events += int(r.Events)
	}
	return ids, events, nil
}
