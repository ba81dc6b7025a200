-- +goose Up
-- Notification channels and the events queued for them. River (its own
-- tables, migrated by `upcheck migrate` after these) carries the delivery
-- jobs; this table is the record that outlives River's job retention:
-- "queued once per channel" holds for ever through UNIQUE (channel_id, key).

CREATE TABLE notification_channels (
    id              bigserial   PRIMARY KEY,
    name            text        NOT NULL CHECK (name <> ''),
    -- webhook: Standard Webhooks JSON, signed; slack: {"text": …}, unsigned;
    -- email: one message per check run.
    kind            text        NOT NULL CHECK (kind IN ('webhook', 'slack', 'email')),
    -- The URL for webhook and slack, the comma-separated addresses for email.
    target          text        NOT NULL CHECK (target <> ''),
    -- security: security updates, unfixed advisories, failing sources, an
    -- overdue check; all: every update too.
    events          text        NOT NULL CHECK (events IN ('security', 'all')),
    -- The signing secret ("whsec_" + base64), webhook channels only. It
    -- must be stored to sign; it is shown once, at creation.
    secret          text,
    enabled         boolean     NOT NULL DEFAULT true,
    -- Why the channel was disabled by upcheck (a receiver answered 410).
    disabled_reason text,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE notification_events (
    -- The event id: the webhook-id header, the same on every attempt.
    id           uuid        PRIMARY KEY,
    channel_id   bigint      NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
    -- Derived from the content (component and version, advisory and
    -- installed version, source and failure episode…), never from the
    -- lease epoch: planning again after a crash finds the same keys.
    key          text        NOT NULL,
    type         text        NOT NULL,
    payload      jsonb       NOT NULL,
    state        text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts     integer     NOT NULL DEFAULT 0,
    last_error   text,
    last_attempt_at timestamptz,
    delivered_at timestamptz,
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- The lease epoch of the check that queued it (null: not a check's).
    epoch        bigint,
    UNIQUE (channel_id, key)
);
CREATE INDEX notification_events_pending ON notification_events (created_at) WHERE state = 'pending';

-- The newest security release newer than the installed version (installable
-- or not): a security_update.available event is keyed by it.
ALTER TABLE component_results ADD COLUMN security_version text;

-- When the source's current run of failures began (its first failure
-- after a success, or its first attempt): a source.failing event is keyed
-- by it, so one episode notifies once. Null while the source succeeds.
ALTER TABLE sources ADD COLUMN failing_since timestamptz;
UPDATE sources SET failing_since = coalesce(last_error_at, clock_timestamp()) WHERE last_error IS NOT NULL;

-- +goose Down
ALTER TABLE sources DROP COLUMN failing_since;
ALTER TABLE component_results DROP COLUMN security_version;
DROP TABLE notification_events;
DROP TABLE notification_channels;
