-- name: ChannelCreate :one
INSERT INTO notification_channels (name, kind, target, events, secret, min_epss, scope)
VALUES (@name, @kind, @target, @events, sqlc.narg(secret), sqlc.narg(min_epss)::float8, @scope)
RETURNING id;

-- name: ChannelList :many
-- Every channel with its scope and, for one of some sites, their ids and
-- names (by name).
SELECT c.id, c.name, c.kind, c.target, c.events, c.min_epss, c.enabled, c.disabled_reason, c.created_at, c.scope,
       ARRAY(SELECT s.id FROM notification_channel_sites cs JOIN sites s ON s.id = cs.site_id
             WHERE cs.channel_id = c.id ORDER BY s.name)::bigint[] AS site_ids,
       ARRAY(SELECT s.name FROM notification_channel_sites cs JOIN sites s ON s.id = cs.site_id
             WHERE cs.channel_id = c.id ORDER BY s.name)::text[] AS site_names
FROM notification_channels c
ORDER BY c.id;

-- name: ChannelDelete :execrows
DELETE FROM notification_channels WHERE id = @id;

-- name: ChannelDisable :execrows
-- A receiver said the endpoint is gone (410): stop sending, say why.
UPDATE notification_channels SET enabled = false, disabled_reason = @reason
WHERE id = @id AND enabled;

-- name: EventPlan :many
-- Queues the events that the current state of the given components of
-- the site calls for, once per channel: an event whose key
-- a channel already has is never queued again. The facts come from the read
-- model, so a dismissed advisory queues nothing. Returns the new events.
-- A known malicious package (each advisory saying so, for the installed
-- version) and an advisory exploited in the wild (once per component and
-- advisory, whatever the version) have their own events, sent to every
-- channel; an unfixed advisory that is neither is held to a channel's
-- min_epss (an advisory without a score is sent). Each of these three
-- remembers its advisory's scope and keys (notification_events.
-- advisory_scope): an advisory back under another id (renamed to or merged
-- into an alias) queues no event of a scope whose stored event shares a key
-- with it.
WITH facts AS (
    SELECT 'malicious_package' AS type,
           cs.code || '@' || cs.installed_version || '/' || (a->>'id') AS subject,
           jsonb_build_object('component', jsonb_build_object('code', cs.code, 'name', cs.name, 'installed', cs.installed_version),
                              'package', cs.package, 'advisory', a - 'no_fix') AS payload,
           NULL::float8 AS epss,
           'malicious_package:' || cs.code || '@' || cs.installed_version AS scope,
           upcheck_advisory_keys(jsonb_build_array(a)) AS keys
    FROM component_state cs
    CROSS JOIN LATERAL jsonb_array_elements(cs.open_advisories) AS a
    WHERE cs.malicious AND coalesce((a->>'malicious')::boolean, false)
      AND cs.site_id = @site::bigint AND cs.code = ANY (@codes::text[])
    UNION ALL
    SELECT 'advisory.exploited',
           cs.code || '/' || (a->>'id'),
           jsonb_build_object('component', jsonb_build_object('code', cs.code, 'name', cs.name, 'installed', cs.installed_version),
                              'advisory', a - 'no_fix'),
           NULL,
           'advisory.exploited:' || cs.code,
           upcheck_advisory_keys(jsonb_build_array(a))
    FROM component_state cs
    CROSS JOIN LATERAL jsonb_array_elements(cs.open_advisories) AS a
    WHERE cs.known_exploited AND coalesce((a->>'known_exploited')::boolean, false)
      AND NOT coalesce((a->>'malicious')::boolean, false)
      AND cs.site_id = @site::bigint AND cs.code = ANY (@codes::text[])
    UNION ALL
    SELECT 'security_update.available',
           cs.code || '@' || r.security_version AS subject,
           jsonb_build_object('component', jsonb_build_object('code', cs.code, 'name', cs.name, 'installed', cs.installed_version),
                              'version', r.security_version,
                              'installable', cs.update_version IS NOT DISTINCT FROM r.security_version,
                              'severity', r.evaluation->'security_release'->>'severity',
                              'summary', r.evaluation->'security_release'->>'summary',
                              'url', r.evaluation->'security_release'->>'url',
                              -- The smallest release that clears the advisories (docs/policy.md).
                              'fix_version', r.fix_version,
                              -- The advisories the update fixes: ids and aliases.
                              'advisories', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', a->>'id', 'aliases', coalesce(a->'aliases', '[]'::jsonb))), '[]'::jsonb)
                                             FROM jsonb_array_elements(cs.open_advisories) AS a
                                             WHERE NOT coalesce((a->>'no_fix')::boolean, false))),
           NULL, NULL, NULL
    FROM component_state cs
    JOIN component_results r ON r.site_id = cs.site_id AND r.code = cs.code
    WHERE cs.security AND r.security_version IS NOT NULL
      AND cs.site_id = @site::bigint AND cs.code = ANY (@codes::text[])
    UNION ALL
    SELECT 'advisory.unfixed',
           cs.code || '@' || cs.installed_version || '/' || (a->>'id'),
           jsonb_build_object('component', jsonb_build_object('code', cs.code, 'name', cs.name, 'installed', cs.installed_version),
                              'advisory', a - 'no_fix'),
           (a->'epss'->>'score')::float8,
           'advisory.unfixed:' || cs.code || '@' || cs.installed_version,
           upcheck_advisory_keys(jsonb_build_array(a))
    FROM component_state cs
    CROSS JOIN LATERAL jsonb_array_elements(cs.open_advisories) AS a
    WHERE cs.vulnerable_no_fix AND (a->>'no_fix')::boolean
      AND NOT coalesce((a->>'known_exploited')::boolean, false)
      AND NOT coalesce((a->>'malicious')::boolean, false)
      AND cs.site_id = @site::bigint AND cs.code = ANY (@codes::text[])
    UNION ALL
    SELECT 'deprecated',
           cs.code || '@' || cs.installed_version,
           jsonb_build_object('component', jsonb_build_object('code', cs.code, 'name', cs.name, 'installed', cs.installed_version),
                              'package', cs.registry_facts->>'package', 'message', cs.deprecated),
           NULL, NULL, NULL
    FROM component_state cs
    WHERE cs.deprecated IS NOT NULL
      AND cs.site_id = @site::bigint AND cs.code = ANY (@codes::text[])
    UNION ALL
    -- A trust downgrade of the offered npm version (docs/policy.md "Trust
    -- going down"): once per component, version and kind; a manifest
    -- sync's downgrade is EventPlanPinDowngrade's.
    SELECT 'trust_downgrade',
           cs.code || '@' || cs.provenance_lost || '/provenance_lost',
           jsonb_build_object('component', jsonb_build_object('code', cs.code, 'name', cs.name, 'installed', cs.installed_version),
                              'package', cs.registry_facts->>'package', 'kind', 'provenance_lost', 'version', cs.provenance_lost),
           NULL, NULL, NULL
    FROM component_state cs
    WHERE cs.provenance_lost IS NOT NULL
      AND cs.site_id = @site::bigint AND cs.code = ANY (@codes::text[])
    UNION ALL
    SELECT 'trust_downgrade',
           cs.code || '@' || cs.new_publisher_version || '/new_publisher',
           jsonb_build_object('component', jsonb_build_object('code', cs.code, 'name', cs.name, 'installed', cs.installed_version),
                              'package', cs.registry_facts->>'package', 'kind', 'new_publisher',
                              'version', cs.new_publisher_version, 'account', cs.new_publisher),
           NULL, NULL, NULL
    FROM component_state cs
    WHERE cs.new_publisher_version IS NOT NULL
      AND cs.site_id = @site::bigint AND cs.code = ANY (@codes::text[])
    UNION ALL
    -- What the offered npm update brings (docs/npm.md "What an update
    -- brings"): once per component, version, signal and what it names (a
    -- script's text by its hash: a changed text is told again).
    SELECT 'trust_downgrade',
           cs.code || '@' || (s->'args'->>'version') || '/' || (s->>'kind')
               || coalesce('/' || nullif(s->'args'->>'name', ''), '') || coalesce('@' || (s->'args'->>'sha256'), ''),
           jsonb_build_object('component', jsonb_build_object('code', cs.code, 'name', cs.name, 'installed', cs.installed_version),
                              'package', cs.registry_facts->>'package', 'kind', s->>'kind',
                              'version', s->'args'->>'version', 'signal', s),
           NULL, NULL, NULL
    FROM component_state cs
    CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(cs.registry_facts->'brings') = 'array'
                                                 THEN cs.registry_facts->'brings' ELSE '[]'::jsonb END) AS s
    WHERE cs.update_available
      AND cs.site_id = @site::bigint AND cs.code = ANY (@codes::text[])
    UNION ALL
    SELECT 'update.available',
           cs.code || '@' || cs.update_version,
           jsonb_build_object('component', jsonb_build_object('code', cs.code, 'name', cs.name, 'installed', cs.installed_version),
                              'version', cs.update_version, 'url', cs.release_url),
           NULL, NULL, NULL
    FROM component_state cs
    WHERE cs.update_available
      AND cs.site_id = @site::bigint AND cs.code = ANY (@codes::text[])
),
-- The channels that were told of each advisory fact under another id
-- (notification_events_advisory): looked up once per fact, in a CTE of its
-- own so that the lookup is not repeated for each channel. Repeated, its
-- estimate (facts times channels, a poor guess of both) passed the cost
-- at which PostgreSQL compiles the plan with JIT, which took longer than
-- the statement; as a NOT EXISTS, the planner made it a hash of every
-- advisory event.
told AS MATERIALIZED (
    SELECT f.*, ARRAY(SELECT e.channel_id FROM notification_events e
                      WHERE e.advisory_scope = f.scope AND e.advisory_keys && f.keys) AS channels
    FROM facts f
)
INSERT INTO notification_events (id, channel_id, key, type, payload, epoch, advisory_scope, advisory_keys)
SELECT gen_random_uuid(), ch.id, f.type || ':' || f.subject, f.type, f.payload, sqlc.narg(epoch)::bigint, f.scope, f.keys
FROM told f
JOIN notification_channels ch ON ch.enabled AND upcheck_channel_sees(ch.scope, ch.id, 1)
     AND (ch.events = 'all' OR f.type <> 'update.available')
     AND (ch.min_epss IS NULL OR f.epss IS NULL OR f.epss >= ch.min_epss)
WHERE (sqlc.narg(channel_id)::bigint IS NULL OR ch.id = sqlc.narg(channel_id)::bigint)
  AND NOT ch.id = ANY (f.channels)
ON CONFLICT (channel_id, key) DO NOTHING
RETURNING id;

-- name: EventPlanNothingNew :exec
-- EventPlan's question without its insert, for a check's pipelined write:
-- raises UN001 (store.ErrEventsToQueue) when an enabled channel may lack an
-- event the given components call for. The function (upcheck_nothing_to_queue) asks
-- it of the stored results, a superset of EventPlan's facts; keep the two
-- in step.
SELECT upcheck_nothing_to_queue(@codes::text[]);

-- name: EventCreateTest :one
-- A "test" event: its key is its own id, so each test is sent.
INSERT INTO notification_events (id, channel_id, key, type, payload)
VALUES (@id::uuid, @channel_id, 'test:' || (@id::uuid)::text, 'test', jsonb_build_object('message', 'A test notification from upcheck.'))
RETURNING id;

-- name: EventForDelivery :one
SELECT e.id, e.type, e.payload, e.state, e.attempts, e.created_at,
       c.id AS channel_id, c.kind, c.target, c.secret, c.enabled, c.name AS channel_name
FROM notification_events e
JOIN notification_channels c ON c.id = e.channel_id
WHERE e.id = @id;

-- name: EventRecordAttempt :exec
-- One send ended: delivered, or failed with why (state failed when that was
-- the last attempt).
UPDATE notification_events
SET attempts        = attempts + 1,
    last_attempt_at = clock_timestamp(),
    last_error      = sqlc.narg(error)::text,
    state           = @state,
    next_attempt_at = CASE WHEN @state = 'pending' THEN clock_timestamp() + make_interval(secs => @retry_in_seconds::float8) END,
    delivered_at    = CASE WHEN @state = 'delivered' THEN clock_timestamp() ELSE delivered_at END
WHERE id = @id;

-- name: EventRetry :execrows
-- A failed event goes back to pending for a retry by hand.
UPDATE notification_events SET state = 'pending'
WHERE id = @id AND state = 'failed';

-- name: EventList :many
SELECT e.id, e.channel_id, c.name AS channel_name, e.type, e.key, e.state, e.attempts, e.last_error,
       e.last_attempt_at, e.delivered_at, e.created_at, e.next_attempt_at, e.message_id, e.held_at
FROM notification_events e
JOIN notification_channels c ON c.id = e.channel_id
ORDER BY e.created_at DESC, e.id
LIMIT @max_rows;

-- name: EventPlanSourceFailing :many
-- A source failing for 24 hours (readmodel.SourceFailingNotice; or never
-- read for 24 hours since its first attempt) notifies once per failure
-- episode, naming the local site's components (its channels' site).
INSERT INTO notification_events (id, channel_id, key, type, payload, epoch)
SELECT gen_random_uuid(), ch.id,
       'source.failing:' || s.url || '@' || to_char(s.failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
       'source.failing',
       jsonb_build_object('source', s.url, 'failing_since', s.failing_since, 'last_error', s.last_error,
                          'last_error_kind', s.last_error_kind, 'last_error_args', s.last_error_args,
                          'consecutive_failures', s.consecutive_failures, 'last_success_at', s.last_success_at,
                          'components', (SELECT coalesce(jsonb_agg(c.code ORDER BY c.code), '[]')
                                         FROM components c WHERE c.source_url = s.url AND c.site_id = 1)),
       sqlc.narg(epoch)::bigint
FROM sources s
JOIN notification_channels ch ON ch.enabled AND upcheck_channel_sees(ch.scope, ch.id, 1)
WHERE s.url = @url AND s.failing_since <= clock_timestamp() - interval '24 hours'
  AND EXISTS (SELECT 1 FROM components c WHERE c.source_url = s.url AND c.site_id = 1)
ON CONFLICT (channel_id, key) DO NOTHING
RETURNING id;

-- name: EventPlanRegistryKeys :many
-- An npm registry whose signing keys changed after first sight notifies
-- once per change (its key is the change's time: a return to keys seen
-- before is a change too).
INSERT INTO notification_events (id, channel_id, key, type, payload, epoch)
SELECT gen_random_uuid(), ch.id,
       'registry_keys.changed:' || k.registry || '@' || to_char(k.changed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
       'registry_keys.changed',
       jsonb_build_object('registry', k.registry, 'key_ids', to_jsonb(k.key_ids),
                          'old_key_ids', to_jsonb(@old_key_ids::text[]), 'changed_at', k.changed_at),
       sqlc.narg(epoch)::bigint
FROM registry_keys k
JOIN notification_channels ch ON ch.enabled AND upcheck_channel_sees(ch.scope, ch.id, 1)
WHERE k.registry = @registry AND k.changed_at IS NOT NULL
ON CONFLICT (channel_id, key) DO NOTHING
RETURNING id;

-- name: EventPlanPinDowngrade :many
-- A manifest sync lowered the trust of the source at @source_url for
-- @codes (pin_downgrades, written in the same transaction): one
-- trust_downgrade event per channel and downgrade, keyed by the source and
-- the time the downgrade was recorded, naming the components (by code, as
-- source.failing does).
INSERT INTO notification_events (id, channel_id, key, type, payload)
SELECT gen_random_uuid(), ch.id,
       'trust_downgrade:' || d.source_url || '@' || to_char(d.changed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '/pin',
       'trust_downgrade',
       jsonb_build_object('kind', 'pin', 'source', d.source_url, 'reason', d.reason, 'changed_at', d.changed_at,
                          'components', d.components)
FROM (SELECT p.source_url, max(p.changed_at) AS changed_at, min(p.reason) AS reason,
             jsonb_agg(c.code ORDER BY c.code) AS components
      FROM pin_downgrades p
      JOIN components c ON c.site_id = p.site_id AND c.code = p.code
      WHERE p.site_id = @site::bigint AND p.source_url = @source_url::text AND p.code = ANY (@codes::text[])
      GROUP BY p.source_url) d
JOIN notification_channels ch ON ch.enabled AND upcheck_channel_sees(ch.scope, ch.id, 1)
ON CONFLICT (channel_id, key) DO NOTHING
RETURNING id;

-- name: EventPlanOverdue :many
-- No check completed for 48 hours (readmodel.CheckOverdue): every instance
-- may notice, the key (the last completion) makes it once per channel.
INSERT INTO notification_events (id, channel_id, key, type, payload)
SELECT gen_random_uuid(), ch.id,
       'check.overdue:' || coalesce(to_char(l.last_completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), 'never'),
       'check.overdue',
       jsonb_build_object('last_completed_at', l.last_completed_at)
FROM core_update_lock l
JOIN notification_channels ch ON ch.enabled AND upcheck_channel_sees(ch.scope, ch.id, 1)
WHERE l.name = 'check'
  AND l.last_completed_at < clock_timestamp() - interval '48 hours'
ON CONFLICT (channel_id, key) DO NOTHING
RETURNING id;

-- name: EventSentAlone :many
-- The events among @ids that are sent one by one, each by its own job:
-- those of webhook and slack channels. An email channel's events wait to be
-- gathered into a message (MessageGather).
SELECT e.id
FROM notification_events e
JOIN notification_channels c ON c.id = e.channel_id
WHERE e.id = ANY (@ids::uuid[]) AND c.kind <> 'email';

-- name: ChannelSetEnabled :execrows
-- An admin turns a channel on or off; turning it on clears why upcheck had
-- turned it off.
UPDATE notification_channels
SET enabled = @enabled::boolean,
    disabled_reason = CASE WHEN @enabled::boolean THEN NULL ELSE 'turned off by an admin' END
WHERE id = @id;

-- name: EventHold :execrows
-- The event's channel is disabled when its turn comes: it is held (stays
-- pending, no job) until the channel is enabled. Only while the channel is
-- disabled: the channel's row is locked FOR SHARE, so an enable that is
-- committing is waited for and then seen (the row is read again), and an
-- enable that starts later waits for this hold and releases it.
WITH ch AS (
    SELECT c.id
    FROM notification_channels c
    JOIN notification_events ev ON ev.channel_id = c.id
    WHERE ev.id = @id AND NOT c.enabled
    FOR SHARE OF c
)
UPDATE notification_events e
SET held_at = clock_timestamp(), next_attempt_at = NULL
FROM ch
WHERE e.id = @id AND e.channel_id = ch.id AND e.state = 'pending';

-- name: EventReleaseHeld :many
-- The held events of enabled channels (every one, or only @channel_id)
-- that are sent alone (not in an email message) are pending again, and
-- returned, for one new job each.
UPDATE notification_events e
SET held_at = NULL
FROM notification_channels c
WHERE c.id = e.channel_id AND c.enabled
  AND e.held_at IS NOT NULL AND e.state = 'pending' AND e.message_id IS NULL
  AND (sqlc.narg(channel_id)::bigint IS NULL OR e.channel_id = sqlc.narg(channel_id)::bigint)
RETURNING e.id;

-- name: ChannelGet :one
SELECT c.id, c.name, c.kind, c.target, c.events, c.min_epss, c.enabled, c.disabled_reason, c.created_at, c.scope,
       ARRAY(SELECT s.id FROM notification_channel_sites cs JOIN sites s ON s.id = cs.site_id
             WHERE cs.channel_id = c.id ORDER BY s.name)::bigint[] AS site_ids,
       ARRAY(SELECT s.name FROM notification_channel_sites cs JOIN sites s ON s.id = cs.site_id
             WHERE cs.channel_id = c.id ORDER BY s.name)::text[] AS site_names
FROM notification_channels c
WHERE c.id = @id;

-- name: EventChannel :one
-- The channel of an event, for the audit of a retry.
SELECT channel_id FROM notification_events WHERE id = @id;
