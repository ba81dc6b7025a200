-- +goose Up
-- An event (or an email message) whose channel is disabled when its turn
-- comes is held, not failed: it stays pending, with held_at set and no
-- job, and enabling the channel queues it again (notify.Service.SetEnabled),
-- once. Before this, such events were failed with "the channel is
-- disabled" and never sent; they are held now, and go out when their
-- channel is enabled (or, for a channel enabled since, at the next hourly
-- pass).
ALTER TABLE notification_events ADD COLUMN held_at timestamptz;
ALTER TABLE notification_messages ADD COLUMN held_at timestamptz;

UPDATE notification_messages
SET state = 'pending', held_at = coalesce(last_attempt_at, clock_timestamp()), last_error = NULL,
    attempts = greatest(attempts - 1, 0)
WHERE state = 'failed' AND last_error = 'the channel is disabled';
UPDATE notification_events
SET state = 'pending', held_at = coalesce(last_attempt_at, clock_timestamp()), last_error = NULL,
    attempts = greatest(attempts - 1, 0)
WHERE state = 'failed' AND last_error = 'the channel is disabled';

CREATE INDEX notification_events_held ON notification_events (channel_id) WHERE held_at IS NOT NULL;

-- +goose Down
DROP INDEX notification_events_held;
UPDATE notification_events SET state = 'failed', last_error = 'the channel is disabled' WHERE held_at IS NOT NULL;
UPDATE notification_messages SET state = 'failed', last_error = 'the channel is disabled' WHERE held_at IS NOT NULL;
ALTER TABLE notification_messages DROP COLUMN held_at;
ALTER TABLE notification_events DROP COLUMN held_at;
