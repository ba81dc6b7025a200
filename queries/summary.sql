-- name: SummaryRead :one
-- One statement over the read model, so the counts agree with each other,
-- with the named components and with the catalog and source health.
-- component_state is read once for the counts, the ranking of the
-- components that need attention and the one never read; the JSON of
-- advisories is read only for the components named.
WITH c AS MATERIALIZED (
    SELECT code, name, installed_version, source_url, update_available, security, vulnerable,
           vulnerable_no_fix, stale, last_success_at, update_version, deprecated, provenance_lost,
           known_exploited, malicious, waiting_version, new_publisher_version, new_publisher,
           pin_downgrade, pin_downgraded_at,
           -- What the offered update brings (most pressing first), when one
           -- is offered and brings anything.
           CASE WHEN update_available AND jsonb_typeof(registry_facts->'brings') = 'array'
                     AND jsonb_array_length(registry_facts->'brings') > 0 THEN registry_facts->'brings' END AS brings,
           upcheck_needs_attention(malicious, known_exploited, security, vulnerable, provenance_lost,
                                   new_publisher_version, pin_downgrade, deprecated,
                                   CASE WHEN update_available THEN registry_facts->'brings' END) AS needs_attention,
           CASE WHEN security THEN evaluation->'security_release' END AS release,
           CASE WHEN security THEN NOT coalesce((evaluation->>'security_needs_newer_core')::boolean, false) END AS release_installable
    FROM component_state
    WHERE site_id = @site::bigint
),
last_run AS (
    SELECT status, trigger, actor, finished_at
    FROM check_runs
    WHERE status NOT IN ('busy', 'cooldown', 'skipped', 'running')
      AND trigger <> 'import' -- an import checked no publisher
    ORDER BY id DESC
    LIMIT 1
),
-- The components named: those that need attention (upcheck_needs_attention,
-- as the catalog's attention filter lists them), most urgent first (a
-- package known to be malicious, then an advisory known to be exploited,
-- then an open advisory with no fix, then a security update by the release's
-- severity, then a vulnerable version, then a trust downgrade (a version
-- that lost provenance, then one published by an account new to the
-- package, then a manifest sync that lowered the source's pin), then an
-- offered update that brings a signal, by its most pressing one
-- (upcheck_signal_rank: a new install script or an exotic source above a
-- lower trust, above a young dependency, above a burst), then a
-- deprecated installed version; then by name), as many as asked for.
ranked AS (
    SELECT c.*,
           CASE WHEN c.malicious THEN 'malicious'
                WHEN c.known_exploited THEN 'known_exploited'
                WHEN c.vulnerable_no_fix THEN 'vulnerable_no_fix'
                WHEN c.security THEN 'security'
                WHEN c.vulnerable THEN 'vulnerable'
                WHEN c.provenance_lost IS NOT NULL THEN 'provenance_lost'
                WHEN c.new_publisher_version IS NOT NULL THEN 'new_publisher'
                WHEN c.pin_downgrade IS NOT NULL THEN 'pin_downgrade'
                WHEN c.brings IS NOT NULL THEN 'brings'
                ELSE 'deprecated' END                                     AS kind,
           CASE WHEN c.malicious THEN -2 WHEN c.known_exploited THEN -1
                WHEN c.vulnerable_no_fix THEN 0 WHEN c.security THEN 1 WHEN c.vulnerable THEN 2
                WHEN c.provenance_lost IS NOT NULL THEN 3 WHEN c.new_publisher_version IS NOT NULL THEN 4
                WHEN c.pin_downgrade IS NOT NULL THEN 5
                WHEN c.brings IS NOT NULL THEN 6 + upcheck_signal_rank(c.brings->0->>'kind') ELSE 12 END AS urgency,
           CASE WHEN c.security AND NOT c.vulnerable_no_fix AND NOT c.known_exploited AND NOT c.malicious
                THEN upcheck_severity_rank(c.release->>'severity') ELSE 0 END AS severity_rank
    FROM c
    WHERE c.needs_attention
    ORDER BY urgency, severity_rank DESC, lower(c.name), c.code
    LIMIT @attention_limit::bigint
),
-- Their exposure and their most urgent open advisory (malicious first,
-- then known exploited, then no fix, then by severity, then in document
-- order), looked up for them alone.
named AS MATERIALIZED (
    SELECT r.*,
           (SELECT e.security_since FROM component_exposure e WHERE e.site_id = @site::bigint AND e.code = r.code)
               AS security_since,
           (SELECT x.a
              FROM component_state cs
              CROSS JOIN LATERAL jsonb_array_elements(cs.open_advisories) WITH ORDINALITY AS x(a, i)
             WHERE cs.site_id = @site::bigint AND cs.code = r.code
             ORDER BY coalesce((x.a->>'malicious')::boolean, false) DESC,
                      coalesce((x.a->>'known_exploited')::boolean, false) DESC,
                      coalesce((x.a->>'no_fix')::boolean, false) DESC, upcheck_severity_rank(x.a->>'severity') DESC, x.i
             LIMIT 1) AS advisory
    FROM ranked r
),
never AS (
    SELECT code, name FROM c
    WHERE source_url IS NOT NULL AND last_success_at IS NULL
    ORDER BY lower(name), code
    LIMIT 1
),
totals AS (
    SELECT count(*)                                                      AS components,
           -- update_available is the offered update, after the policy
           -- (release.Evaluation.Offer): a release waiting for its soak,
           -- held or not offered is not counted there; waiting counts the
           -- components with a release waiting for its soak.
           count(*) FILTER (WHERE update_available)                      AS updates_available,
           count(*) FILTER (WHERE waiting_version IS NOT NULL)           AS waiting,
           count(*) FILTER (WHERE security)                              AS security_updates,
           count(*) FILTER (WHERE vulnerable)                            AS vulnerable,
           count(*) FILTER (WHERE needs_attention)                       AS attention_total,
           count(*) FILTER (WHERE deprecated IS NOT NULL)                AS deprecated,
           count(*) FILTER (WHERE brings IS NOT NULL)                    AS brings,
           count(*) FILTER (WHERE provenance_lost IS NOT NULL OR new_publisher_version IS NOT NULL
                                  OR pin_downgrade IS NOT NULL)          AS trust_downgrades,
           count(*) FILTER (WHERE known_exploited)                       AS known_exploited,
           count(*) FILTER (WHERE malicious)                             AS malicious,
           count(*) FILTER (WHERE stale)                                 AS stale,
           min(last_success_at) FILTER (WHERE source_url IS NOT NULL)    AS oldest_success_at,
           coalesce(bool_or(source_url IS NOT NULL AND last_success_at IS NULL), false) AS any_never
    FROM c
),
-- The site's sources (site_source_state, the one definition of each
-- flag): those its components use, not another site's.
src AS (
    SELECT count(*) FILTER (WHERE failing)   AS failing,
           count(*) FILTER (WHERE untrusted) AS untrusted,
           count(*) FILTER (WHERE unsigned)  AS unsigned
    FROM site_source_state
    WHERE site_id = @site::bigint
),
oldest_security AS (
    SELECT min(security_since) AS since FROM component_exposure WHERE site_id = @site::bigint
),
-- One row, always: joined LEFT only so that sqlc types its column as
-- nullable, which it is.
malware AS (
    SELECT upcheck_malware_read_at() AS read_at
),
exploited AS (
    SELECT upcheck_exploited_read_at() AS read_at
),
-- The installed tree as last read: no row while none was.
tree AS (
    SELECT t.packages, t.synced_at FROM tree_state t WHERE t.site_id = @site::bigint
),
-- What in the installed tree needs attention under UPCHECK_LOCKFILE_DEV
-- (upcheck_tree_attention, the one definition), one item per package
-- version installed now and one per version the site no longer has
-- (exposed), each under its most urgent kind (a malicious package and a
-- look-back finding first, then exploited in the wild, then no fix,
-- then vulnerable, then what a lockfile change brought with a signal:
-- readmodel.TreeAttentionKinds) and that kind's advisory (a malicious
-- one, then the latest interval, then by id) or signal: the counts by
-- kind add up to the total.
tree_rows AS (
    SELECT a.kind::text AS kind, a.name::text AS name, a.version::text AS version, a.advisory_id::text AS advisory_id,
           a.malicious::boolean AS malicious, a.installed_at::timestamptz AS installed_at,
           a.removed_at::timestamptz AS removed_at, NULL::jsonb AS brings
    FROM upcheck_tree_attention(@site::bigint, @dev_mode::text) a
    UNION ALL
    -- What a lockfile change brought to a version installed now
    -- (tree_brings, docs/npm.md "What a lockfile change brought"), by its
    -- most pressing signal: after the advisories, as an offer's signals
    -- come after the components' advisories (readmodel.Urgency).
    SELECT 'brings', b.name, b.version, '', false, NULL::timestamptz, NULL::timestamptz, b.signals->0
    FROM tree_brings b
    JOIN tree_versions v ON v.id = b.interval_id AND v.removed_at IS NULL AND v.site_id = @site::bigint
    WHERE jsonb_array_length(b.signals) > 0
),
tree_items AS MATERIALIZED (
    SELECT DISTINCT ON (a.name, a.version, a.kind = 'exposed')
           a.kind, a.name, a.version, a.advisory_id, a.malicious, a.installed_at, a.removed_at, a.brings,
           array_position(ARRAY['malicious', 'exposed', 'known_exploited', 'vulnerable_no_fix', 'vulnerable', 'brings'],
                          a.kind) AS urgency,
           coalesce(upcheck_signal_rank(a.brings->>'kind'), 0) AS signal_rank
    FROM tree_rows a
    ORDER BY a.name, a.version, a.kind = 'exposed',
             array_position(ARRAY['malicious', 'exposed', 'known_exploited', 'vulnerable_no_fix', 'vulnerable', 'brings'], a.kind),
             upcheck_signal_rank(a.brings->>'kind'), a.malicious DESC, a.removed_at DESC NULLS LAST, a.advisory_id
),
tree_totals AS (
    SELECT count(*)                                          AS total,
           count(*) FILTER (WHERE kind = 'malicious')        AS malicious,
           count(*) FILTER (WHERE kind = 'exposed')          AS exposed,
           count(*) FILTER (WHERE kind = 'known_exploited')  AS known_exploited,
           count(*) FILTER (WHERE kind = 'vulnerable_no_fix') AS vulnerable_no_fix,
           count(*) FILTER (WHERE kind = 'vulnerable')       AS vulnerable,
           count(*) FILTER (WHERE kind = 'brings')           AS brings
    FROM tree_items
),
-- The tree's items named, most urgent first (an item a lockfile change
-- brought by its signal's rank, upcheck_signal_rank), then by name and
-- version, as many as the components' (@attention_limit).
tree_named AS (
    SELECT t.kind, t.name, t.version, t.advisory_id, t.malicious, t.installed_at, t.removed_at, t.urgency, t.brings,
           t.signal_rank
    FROM tree_items t
    ORDER BY t.urgency, t.signal_rank, t.name, t.version, t.advisory_id
    LIMIT @attention_limit::bigint
)
SELECT
    totals.components::bigint                                                   AS components,
    totals.updates_available::bigint                                            AS updates_available,
    totals.waiting::bigint                                                      AS waiting,
    totals.security_updates::bigint                                             AS security_updates,
    totals.vulnerable::bigint                                                   AS vulnerable,
    src.failing::bigint                                                         AS failing_sources,
    src.untrusted::bigint                                                       AS untrusted_sources,
    src.unsigned::bigint                                                        AS unsigned_sources,
    totals.stale::bigint                                                        AS stale,
    totals.deprecated::bigint                                                   AS deprecated,
    totals.trust_downgrades::bigint                                             AS trust_downgrades,
    totals.brings::bigint                                                       AS brings,
    totals.known_exploited::bigint                                              AS known_exploited,
    totals.malicious::bigint                                                    AS malicious,
    -- null while no feed that names malicious packages was ever read: then
    -- the malicious count is not given (upcheck_malware_read_at)
    malware.read_at                                                             AS malware_read_at,
    -- null while the KEV catalogue was never read: then the known_exploited
    -- count is not given (upcheck_exploited_read_at)
    exploited.read_at                                                           AS exploited_read_at,
    -- null while any component with a source has never succeeded
    totals.any_never::boolean                                                   AS any_never_succeeded,
    totals.oldest_success_at                                                    AS oldest_success_at,
    last_run.status                                                             AS last_status,
    last_run.trigger                                                            AS last_trigger,
    last_run.actor                                                              AS last_actor,
    last_run.finished_at                                                        AS last_finished_at,
    coalesce((SELECT owner IS NOT NULL AND expires_at > clock_timestamp()
                FROM core_update_lock WHERE name = 'check'), false)::boolean    AS check_running,
    -- The deliveries of the channels told of this site alone
    -- (upcheck_channel_only_of): not the fleet's, nor another site's.
    (SELECT count(*) FROM notification_events e
       JOIN notification_channels ch ON ch.id = e.channel_id AND upcheck_channel_only_of(ch.scope, ch.id, @site::bigint)
      WHERE e.state <> 'delivered' AND e.last_error IS NOT NULL)::bigint         AS notifications_failing,
    (SELECT count(*) FROM notification_events e
       JOIN notification_channels ch ON ch.id = e.channel_id AND upcheck_channel_only_of(ch.scope, ch.id, @site::bigint)
      WHERE e.state = 'pending')::bigint                                         AS notifications_pending,
    coalesce((SELECT extract(epoch FROM clock_timestamp() - min(e.created_at))
                FROM notification_events e
                JOIN notification_channels ch ON ch.id = e.channel_id AND upcheck_channel_only_of(ch.scope, ch.id, @site::bigint)
               WHERE e.state = 'pending'), 0)::float8                          AS oldest_pending_seconds,
    (SELECT coalesce(jsonb_agg(jsonb_build_object(
                'code', a.code, 'name', a.name, 'installed', a.installed_version,
                'update_version', a.update_version, 'kind', a.kind,
                'security_release', CASE WHEN jsonb_typeof(a.release) = 'object' THEN
                    jsonb_build_object('version', a.release->>'version', 'severity', coalesce(a.release->>'severity', ''),
                                       'summary', coalesce(a.release->>'summary', ''),
                                       'installable', a.release_installable) END,
                'advisory', CASE WHEN a.advisory IS NOT NULL THEN
                    jsonb_build_object('id', a.advisory->>'id', 'summary', coalesce(a.advisory->>'summary', ''),
                                       'severity', coalesce(a.advisory->>'severity', ''),
                                       'fixed_in', nullif(a.advisory->>'fixed_in', ''),
                                       'cleared_by', nullif(a.advisory->>'cleared_by', ''),
                                       'known_exploited', coalesce((a.advisory->>'known_exploited')::boolean, false),
                                       'malicious', coalesce((a.advisory->>'malicious')::boolean, false),
                                       'kev_due', a.advisory->'kev'->>'due_date') END,
                'security_since', a.security_since,
                'deprecated', a.deprecated, 'provenance_lost', a.provenance_lost,
                'new_publisher', CASE WHEN a.new_publisher_version IS NOT NULL THEN
                    jsonb_build_object('version', a.new_publisher_version, 'account', coalesce(a.new_publisher, '')) END,
                'pin_downgrade', CASE WHEN a.pin_downgrade IS NOT NULL THEN
                    jsonb_build_object('reason', a.pin_downgrade, 'at', a.pin_downgraded_at) END,
                'brings', a.brings->0)
                ORDER BY a.urgency, a.severity_rank DESC, lower(a.name), a.code), '[]'::jsonb)
       FROM named a)::jsonb                                                    AS attention,
    totals.attention_total::bigint                                             AS attention_total,
    never.code                                                                 AS never_code,
    never.name                                                                 AS never_name,
    -- null while no tree was read (a manifest site, or a lockfile not
    -- synced yet): then the dependencies are not checked
    tree.packages                                                              AS tree_packages,
    tree.synced_at                                                             AS tree_read_at,
    tree_totals.total::bigint                                                  AS tree_total,
    tree_totals.malicious::bigint                                              AS tree_malicious,
    tree_totals.exposed::bigint                                                AS tree_exposed,
    tree_totals.known_exploited::bigint                                        AS tree_known_exploited,
    tree_totals.vulnerable_no_fix::bigint                                      AS tree_vulnerable_no_fix,
    tree_totals.vulnerable::bigint                                             AS tree_vulnerable,
    tree_totals.brings::bigint                                                 AS tree_brings,
    (SELECT coalesce(jsonb_agg(jsonb_build_object(
                'name', n.name, 'version', n.version, 'advisory_id', n.advisory_id, 'kind', n.kind,
                'malicious', n.malicious, 'installed_at', n.installed_at, 'removed_at', n.removed_at, 'brings', n.brings)
                ORDER BY n.urgency, n.signal_rank, n.name, n.version, n.advisory_id), '[]'::jsonb)
       FROM tree_named n)::jsonb                                               AS tree_attention,
    oldest_security.since                                                      AS oldest_security_since,
    coalesce(extract(epoch FROM clock_timestamp() - oldest_security.since), 0)::float8 AS oldest_security_seconds
FROM totals
LEFT JOIN last_run ON true
LEFT JOIN never ON true
CROSS JOIN oldest_security
CROSS JOIN src
LEFT JOIN malware ON true
LEFT JOIN exploited ON true
LEFT JOIN tree ON true
CROSS JOIN tree_totals;
