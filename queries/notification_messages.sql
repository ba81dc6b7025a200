-- name: MessageGatherLock :exec
-- Gatherings take turns (the check's end, a new channel, a test, the hourly
-- job), so two never split one channel's loose events between them. It is
-- a statement of its own: the gathering's statement must start, and take
-- its snapshot, after the lock is held.
SELECT pg_advisory_xact_lock(@lock_key::bigint);

-- name: MessageGather :many
-- Gathers the pending events of email channels that are in no message yet
-- into one new message per channel (every email channel, or only
-- @channel_id), keyed by the channel and the sorted keys of its events, and
-- returns the new messages. Events queued by a check that still holds the
-- lease are left for that check's end unless @include_running: a running
-- check's events go out together, in one message.
WITH loose AS (
    SELECT e.id, e.channel_id, e.key
    FROM notification_events e
    JOIN notification_channels c ON c.id = e.channel_id AND c.kind = 'email'
    WHERE e.message_id IS NULL AND e.state = 'pending'
      AND (sqlc.narg(channel_id)::bigint IS NULL OR e.channel_id = sqlc.narg(channel_id)::bigint)
      AND (@include_running::boolean OR e.epoch IS NULL OR NOT EXISTS (
            SELECT 1 FROM core_update_lock l
            WHERE l.name = 'check' AND l.epoch = e.epoch AND l.expires_at > clock_timestamp()))
),
grouped AS (
    SELECT channel_id, encode(sha256(convert_to(string_agg(key, E'\n' ORDER BY key), 'UTF8')), 'hex') AS key
    FROM loose
    GROUP BY channel_id
),
created AS (
    -- A conflict would need the same events loose twice; they are in a
    -- message once gathered, so it cannot happen under the lock above.
    INSERT INTO notification_messages (id, channel_id, key)
    SELECT gen_random_uuid(), channel_id, key FROM grouped
    ON CONFLICT (channel_id, key) DO NOTHING
    RETURNING id, channel_id
),
attached AS (
    UPDATE notification_events e SET message_id = m.id
    FROM created m, loose l
    WHERE e.id = l.id AND l.channel_id = m.channel_id
    RETURNING e.id
)
SELECT id FROM created;

-- name: MessageForSend :one
SELECT m.id, m.key, m.state, m.attempts, m.created_at,
       c.id AS channel_id, c.name AS channel_name, c.kind, c.target, c.enabled, c.created_at AS channel_created_at
FROM notification_messages m
JOIN notification_channels c ON c.id = m.channel_id
WHERE m.id = @id;

-- name: MessageEvents :many
SELECT id, type, key, payload, created_at
FROM notification_events
WHERE message_id = @message_id::uuid
ORDER BY created_at, key;

-- name: MessageRecordAttempt :exec
-- One send of a message ended: the message and each of its events record
-- it alike (delivered, pending to be tried again, or failed).
WITH message AS (
    UPDATE notification_messages msg
    SET attempts        = attempts + 1,
        last_attempt_at = clock_timestamp(),
        last_error      = sqlc.narg(error)::text,
        state           = @state,
        delivered_at    = CASE WHEN @state = 'delivered' THEN clock_timestamp() ELSE delivered_at END
    WHERE msg.id = @id
    RETURNING msg.id
)
UPDATE notification_events
SET attempts        = attempts + 1,
    last_attempt_at = clock_timestamp(),
    last_error      = sqlc.narg(error)::text,
    state           = @state,
    delivered_at    = CASE WHEN @state = 'delivered' THEN clock_timestamp() ELSE delivered_at END
WHERE message_id IN (SELECT m.id FROM message m);

-- name: MessageRetry :one
-- A failed message goes back to pending with its failed events, for a
-- retry by hand of any of its events (@event_id). No row: the event is in
-- no failed message.
WITH message AS (
    UPDATE notification_messages msg SET state = 'pending'
    WHERE msg.id = (SELECT e.message_id FROM notification_events e WHERE e.id = @event_id) AND msg.state = 'failed'
    RETURNING msg.id
),
events AS (
    UPDATE notification_events SET state = 'pending'
    WHERE message_id IN (SELECT m.id FROM message m) AND state = 'failed'
    RETURNING id
)
SELECT id FROM message;

-- name: MessageHold :execrows
-- As EventHold, for an email message and its events.
WITH ch AS (
    SELECT c.id
    FROM notification_channels c
    JOIN notification_messages mm ON mm.channel_id = c.id
    WHERE mm.id = @id AND NOT c.enabled
    FOR SHARE OF c
),
held AS (
    UPDATE notification_messages m
    SET held_at = clock_timestamp()
    FROM ch
    WHERE m.id = @id AND m.channel_id = ch.id AND m.state = 'pending'
    RETURNING m.id
)
UPDATE notification_events e
SET held_at = clock_timestamp()
FROM held
WHERE e.message_id = held.id;

-- name: MessageReleaseHeld :many
-- The held messages of enabled email channels (every one, or only
-- @channel_id) are pending again, with their events, and returned with
-- how many events each covers, for one new job each.
WITH released AS (
    UPDATE notification_messages m
    SET held_at = NULL
    FROM notification_channels c
    WHERE c.id = m.channel_id AND c.enabled
      AND m.held_at IS NOT NULL AND m.state = 'pending'
      AND (sqlc.narg(channel_id)::bigint IS NULL OR m.channel_id = sqlc.narg(channel_id)::bigint)
    RETURNING m.id
),
events AS (
    UPDATE notification_events e SET held_at = NULL
    WHERE e.message_id IN (SELECT r.id FROM released r)
    RETURNING e.id, e.message_id
)
SELECT r.id, (SELECT count(*) FROM events ev WHERE ev.message_id = r.id)::int AS events FROM released r;
