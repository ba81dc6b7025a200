-- +goose Up
-- Notification channels and the events queued for them. River (its own
-- tables, migrated by `upcheck migrate` after these) carries the delivery
-- jobs; these tables are the record that outlives River's job retention:
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
    -- The least EPSS probability (0 to 1) an advisory event must have to be
    -- sent to the channel (advisory.unfixed; an advisory without a score is
    -- sent); null: every one. Known-exploited and malicious-package events
    -- are always sent.
    min_epss        double precision CHECK (min_epss >= 0 AND min_epss <= 1),
    -- The signing secret ("whsec_" + base64), webhook channels only. It
    -- must be stored to sign; it is shown once, at creation.
    secret          text,
    enabled         boolean     NOT NULL DEFAULT true,
    -- Why the channel was disabled by upcheck (a receiver answered 410).
    disabled_reason text,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);

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
    -- See notification_events.held_at.
    held_at         timestamptz,
    UNIQUE (channel_id, key)
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
    -- The message an email channel's event is sent in; null until gathered
    -- (and always for webhook and slack events).
    message_id   uuid        REFERENCES notification_messages (id) ON DELETE SET NULL,
    -- When a pending event will be tried again, as its worker computed it
    -- with the backoff: the Notifications page shows it (River keeps its own
    -- copy in river_job, which is River's and not indexed by event).
    next_attempt_at timestamptz,
    -- An event (or an email message) whose channel is disabled when its
    -- turn comes is held, not failed: it stays pending, with held_at set and
    -- no job, and enabling the channel queues it again
    -- (notify.Service.SetEnabled), once.
    held_at      timestamptz,
    -- An event about one advisory (malicious_package, advisory.exploited,
    -- advisory.unfixed) remembers the advisory's keys, its id and aliases
    -- upper-cased (upcheck_advisory_keys), and its scope, the event's key
    -- without the advisory id ("advisory.unfixed:blog@2.3.0"); null for
    -- every other event. The same advisory can come back under another id
    -- (an OSV record renamed to or merged into one of its aliases, a
    -- publisher's id replaced by the GHSA id that lists it): EventPlan does
    -- not queue an event whose scope a stored event of the channel has
    -- with keys that overlap the advisory's, so the operator is not told
    -- twice of what they know.
    advisory_scope text,
    advisory_keys  text[],
    CHECK ((advisory_scope IS NULL) = (advisory_keys IS NULL)),
    UNIQUE (channel_id, key)
);
-- The lookup of that rule: the events of one scope (a component, its
-- installed version where the key has it, one type) are a few advisories
-- on each channel, whose keys are then compared; EventPlan asks for the
-- channels that have one, upcheck_nothing_to_queue for one channel. A GIN
-- index on advisory_keys would answer the overlap first, which matches
-- every event of the same CVE on every component and channel.
CREATE INDEX notification_events_advisory ON notification_events (advisory_scope, channel_id) INCLUDE (advisory_keys)
    WHERE advisory_scope IS NOT NULL;
CREATE INDEX notification_events_pending ON notification_events (created_at) WHERE state = 'pending';
CREATE INDEX notification_events_message ON notification_events (message_id) WHERE message_id IS NOT NULL;
-- What a gathering looks for: pending events not yet in a message.
CREATE INDEX notification_events_loose ON notification_events (channel_id) WHERE message_id IS NULL AND state = 'pending';
CREATE INDEX notification_events_held ON notification_events (channel_id) WHERE held_at IS NOT NULL;

-- +goose StatementBegin
-- EventPlan's question without its insert, for a check's pipelined write
-- (queries/notifications.sql, EventPlanNothingNew): raises UN001
-- (store.ErrEventsToQueue) when an enabled channel may lack an event that
-- the given components call for; the writer then plans in a transaction
-- (EventPlan), which queues exactly the right ones. It is cheap because it
-- reads the stored results alone, not the read model: the keys it makes are
-- a superset of those EventPlan makes (the read model's facts come from the
-- current result, minus dismissed advisories, and are keyed by the same
-- fields), so it may send a write to the transaction for nothing (a
-- dismissed unfixed advisory does, each time), never skip an event. Keep
-- it in step with EventPlan. Without an enabled channel it reads no result.
-- It sees the channels EventPlan would see at that point of the same
-- transaction.
--
-- An advisory's event whose key is missing is not missing when a stored
-- event of the channel has its scope and shares a key with it (EventPlan's
-- rule for an advisory back under another id, notification_events.
-- advisory_scope). That is asked in a second statement, of the events
-- missing by their keys alone, so that a check whose events are all
-- queued (the common case) runs the first statement as it was: asked in
-- the first, beside each key's lookup, it doubled the plan's estimate,
-- past the cost at which PostgreSQL compiles a plan with JIT (which took
-- longer than the statement). Only the second reads an advisory's id and
-- aliases from the result's JSON. An id is one advisory of a result (a
-- document's ids are unique, the feeds' records are merged into the
-- advisory they share a key with); an id without one in the JSON has no
-- keys: missing, as before.
--
-- A function, with a generic plan: as a prepared statement, PostgreSQL
-- re-planned it at every execution (its generic plan's estimate, for an
-- array of unknown length, is above the custom plans'), which cost four
-- times its execution.
CREATE FUNCTION upcheck_nothing_to_queue(codes text[])
RETURNS void
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    -- The events missing by their keys: channel, scope, advisory id and
    -- component of each (scope null: not an advisory's event).
    by_key jsonb;
    missing bigint;
    -- A channel has an EPSS threshold: only then are scores read.
    thresholds boolean := EXISTS (SELECT FROM notification_channels
                                  WHERE enabled AND min_epss IS NOT NULL AND upcheck_channel_sees(scope, id, 1));
BEGIN
    -- No enabled channel: no event to queue, and no result to read. Asked
    -- first: the planner would otherwise make the results' side of the
    -- join below the outer one and look every component up once per kind
    -- of event to join it with no channel, under the lease's lock
    -- (docs/performance.md, "The document check's write path").
    -- Only the channels that see the local site (scope and
    -- upcheck_channel_sees: migrations/00027_notification_sites.sql) are
    -- told of its components, and only its results are read (site 1:
    -- another site's component of the same code is
    -- upcheck_sites_nothing_to_queue's, migrations/00031), each by its
    -- key (site_id, code).
    IF NOT EXISTS (SELECT FROM notification_channels WHERE enabled AND upcheck_channel_sees(scope, id, 1)) THEN
        RETURN;
    END IF;
    SELECT jsonb_agg(jsonb_build_object('channel', ch.id, 'scope', f.scope, 'id', f.id, 'code', f.code))
           FILTER (WHERE NOT EXISTS (SELECT FROM notification_events e WHERE e.channel_id = ch.id AND e.key = f.key))
    INTO by_key
    FROM notification_channels ch
    JOIN (
        SELECT 'security_update.available:' || r.code || '@' || r.security_version AS key, false AS update_only,
               NULL::float8 AS epss, NULL AS scope, NULL AS id, NULL AS code
        FROM component_results r
        WHERE r.site_id = 1 AND r.code = ANY (codes) AND (r.security OR r.fix_ids <> '{}') AND r.security_version IS NOT NULL
        UNION ALL
        SELECT 'malicious_package:' || r.code || '@' || r.installed_version || '/' || id, false, NULL::float8,
               'malicious_package:' || r.code || '@' || r.installed_version, id, r.code
        FROM component_results r
        CROSS JOIN LATERAL unnest(r.malicious_ids) AS id
        WHERE r.site_id = 1 AND r.code = ANY (codes)
        UNION ALL
        SELECT 'advisory.exploited:' || r.code || '/' || id, false, NULL,
               'advisory.exploited:' || r.code, id, r.code
        FROM component_results r
        CROSS JOIN LATERAL unnest(r.exploited_ids) AS id
        WHERE r.site_id = 1 AND r.code = ANY (codes) AND NOT id = ANY (r.malicious_ids)
        UNION ALL
        -- An unfixed advisory that is exploited or malicious has its own
        -- event; its EPSS score is read only for a channel with a threshold.
        SELECT 'advisory.unfixed:' || r.code || '@' || r.installed_version || '/' || id, false,
               CASE WHEN thresholds THEN (SELECT max((a->'epss'->>'score')::float8)
                                           FROM jsonb_array_elements(r.advisories) AS a WHERE a->>'id' = id) END,
               'advisory.unfixed:' || r.code || '@' || r.installed_version, id, r.code
        FROM component_results r
        CROSS JOIN LATERAL unnest(r.no_fix_ids) AS id
        WHERE r.site_id = 1 AND r.code = ANY (codes) AND NOT id = ANY (r.exploited_ids) AND NOT id = ANY (r.malicious_ids)
        UNION ALL
        SELECT 'deprecated:' || r.code || '@' || r.installed_version, false, NULL, NULL, NULL, NULL
        FROM component_results r
        WHERE r.site_id = 1 AND r.code = ANY (codes) AND r.deprecated IS NOT NULL
        UNION ALL
        SELECT 'trust_downgrade:' || r.code || '@' || r.provenance_lost || '/provenance_lost', false, NULL, NULL, NULL, NULL
        FROM component_results r
        WHERE r.site_id = 1 AND r.code = ANY (codes) AND r.provenance_lost IS NOT NULL
        UNION ALL
        SELECT 'trust_downgrade:' || r.code || '@' || r.new_publisher_version || '/new_publisher', false, NULL, NULL, NULL, NULL
        FROM component_results r
        WHERE r.site_id = 1 AND r.code = ANY (codes) AND r.new_publisher_version IS NOT NULL
        UNION ALL
        -- What the offered npm update brings (EventPlan keys it the same).
        SELECT 'trust_downgrade:' || r.code || '@' || (s->'args'->>'version') || '/' || (s->>'kind')
                   || coalesce('/' || nullif(s->'args'->>'name', ''), '') || coalesce('@' || (s->'args'->>'sha256'), ''),
               false, NULL, NULL, NULL, NULL
        FROM component_results r
        CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(r.registry_facts->'brings') = 'array'
                                                     THEN r.registry_facts->'brings' ELSE '[]'::jsonb END) AS s
        WHERE r.site_id = 1 AND r.code = ANY (codes) AND r.update_available
        UNION ALL
        SELECT 'update.available:' || r.code || '@' || r.update_version, true, NULL, NULL, NULL, NULL
        FROM component_results r
        WHERE r.site_id = 1 AND r.code = ANY (codes) AND r.update_available
    ) f ON (ch.events = 'all' OR NOT f.update_only)
       AND (ch.min_epss IS NULL OR f.epss IS NULL OR f.epss >= ch.min_epss)
    WHERE ch.enabled AND upcheck_channel_sees(ch.scope, ch.id, 1);
    IF by_key IS NULL THEN
        RETURN;
    END IF;
    SELECT count(*)
    INTO missing
    FROM jsonb_array_elements(by_key) AS m(v)
    WHERE m.v->>'scope' IS NULL OR NOT EXISTS (
        SELECT FROM notification_events e
        JOIN component_results r ON r.site_id = 1 AND r.code = m.v->>'code'
        WHERE e.advisory_scope = m.v->>'scope' AND e.channel_id = (m.v->>'channel')::bigint
          AND e.advisory_keys && upcheck_advisory_keys(jsonb_path_query_array(
                  r.advisories, '$[*] ? (@.id == $id)', jsonb_build_object('id', m.v->>'id'))));
    IF missing > 0 THEN
        RAISE EXCEPTION '% notification events to queue', missing USING ERRCODE = 'UN001';
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION upcheck_nothing_to_queue(text[]);
DROP TABLE notification_events;
DROP TABLE notification_messages;
DROP TABLE notification_channels;
