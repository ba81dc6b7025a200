-- +goose Up
-- Email channels send one message per check run, not one per event: the
-- events a run queued for an email channel are gathered into one message
-- (internal/notify/email.go says when), and the message is what is sent,
-- retried and recorded. Webhook and slack events never have a message.

CREATE TABLE notification_messages (
    -- The River job's argument; the Message-ID is derived from the key.
    id              uuid        PRIMARY KEY,
    channel_id      bigint      NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
    -- Hex SHA-256 of the sorted keys of the message's events: the message
    -- is keyed by its channel and the set of its events.
    key             text        NOT NULL,
    state           text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0,
    last_error      text,
    last_attempt_at timestamptz,
    delivered_at    timestamptz,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (channel_id, key)
);

-- The message an email channel's event is sent in; null until gathered
-- (and always for webhook and slack events).
ALTER TABLE notification_events
    ADD COLUMN message_id uuid REFERENCES notification_messages (id) ON DELETE SET NULL;
CREATE INDEX notification_events_message ON notification_events (message_id) WHERE message_id IS NOT NULL;
-- What a gathering looks for: pending events not yet in a message.
CREATE INDEX notification_events_loose ON notification_events (channel_id) WHERE message_id IS NULL AND state = 'pending';

-- +goose Down
DROP INDEX notification_events_loose;
ALTER TABLE notification_events DROP COLUMN message_id;
DROP TABLE notification_messages;
