-- name: SummaryRead :one
-- One statement over the read model, so the counts agree with each other,
-- with the named components and with the catalog and source health.
WITH c AS (
    SELECT source_url, update_available, security, vulnerable, stale, last_success_at
    FROM component_state
),
last_run AS (
    SELECT status, trigger, finished_at
    FROM check_runs
    WHERE status NOT IN ('busy', 'cooldown', 'skipped', 'running')
    ORDER BY id DESC
    LIMIT 1
),
-- The components that need action, each with its most urgent open
-- advisory (no fix first, then by severity, then in document order), its
-- newest security release and its exposure (component_exposure).
attention AS (
    SELECT cs.code, cs.name, cs.installed_version, cs.update_version,
           CASE WHEN cs.vulnerable_no_fix THEN 'vulnerable_no_fix'
                WHEN cs.security THEN 'security'
                ELSE 'vulnerable' END                                   AS kind,
           CASE WHEN cs.vulnerable_no_fix THEN 0 WHEN cs.security THEN 1 ELSE 2 END AS urgency,
           CASE WHEN cs.security THEN cs.evaluation->'security_release' END AS release,
           NOT coalesce((cs.evaluation->>'security_needs_newer_core')::boolean, false) AS release_installable,
           top.a                                                        AS advisory,
           e.security_since
    FROM component_state cs
    LEFT JOIN component_exposure e ON e.code = cs.code
    LEFT JOIN LATERAL (
        SELECT x.a
        FROM jsonb_array_elements(cs.open_advisories) WITH ORDINALITY AS x(a, n)
        ORDER BY coalesce((x.a->>'no_fix')::boolean, false) DESC, upcheck_severity_rank(x.a->>'severity') DESC, x.n
        LIMIT 1
    ) top ON true
    WHERE cs.security OR cs.vulnerable
),
-- Most urgent first: no fix, then security updates, then vulnerable; within
-- each, the severity of what makes it so, then by name.
ranked AS (
    SELECT a.*,
           row_number() OVER (ORDER BY a.urgency,
                              upcheck_severity_rank(CASE WHEN a.urgency = 1 THEN coalesce(a.release->>'severity', a.advisory->>'severity')
                                                         ELSE a.advisory->>'severity' END) DESC,
                              lower(a.name), a.code) AS n
    FROM attention a
),
never AS (
    SELECT code, name FROM component_state
    WHERE source_url IS NOT NULL AND last_success_at IS NULL
    ORDER BY lower(name), code
    LIMIT 1
),
oldest_security AS (
    SELECT min(security_since) AS since FROM component_exposure
),
totals AS (
    SELECT count(*)                                                      AS components,
           count(*) FILTER (WHERE update_available)                      AS updates_available,
           count(*) FILTER (WHERE security)                              AS security_updates,
           count(*) FILTER (WHERE vulnerable)                            AS vulnerable,
           count(*) FILTER (WHERE stale)                                 AS stale,
           min(last_success_at) FILTER (WHERE source_url IS NOT NULL)    AS oldest_success_at,
           coalesce(bool_or(source_url IS NOT NULL AND last_success_at IS NULL), false) AS any_never
    FROM c
)
SELECT
    totals.components::bigint                                                   AS components,
    totals.updates_available::bigint                                            AS updates_available,
    totals.security_updates::bigint                                             AS security_updates,
    totals.vulnerable::bigint                                                   AS vulnerable,
    (SELECT count(*) FROM source_state WHERE failing)::bigint                   AS failing_sources,
    totals.stale::bigint                                                        AS stale,
    -- null while any component with a source has never succeeded
    totals.any_never::boolean                                                   AS any_never_succeeded,
    totals.oldest_success_at                                                    AS oldest_success_at,
    last_run.status                                                             AS last_status,
    last_run.trigger                                                            AS last_trigger,
    last_run.finished_at                                                        AS last_finished_at,
    coalesce((SELECT owner IS NOT NULL AND expires_at > clock_timestamp()
                FROM core_update_lock WHERE name = 'check'), false)::boolean    AS check_running,
    (SELECT count(*) FROM notification_events
      WHERE state <> 'delivered' AND last_error IS NOT NULL)::bigint             AS notifications_failing,
    (SELECT count(*) FROM notification_events WHERE state = 'pending')::bigint  AS notifications_pending,
    coalesce((SELECT extract(epoch FROM clock_timestamp() - min(created_at))
                FROM notification_events WHERE state = 'pending'), 0)::float8  AS oldest_pending_seconds,
    (SELECT coalesce(jsonb_agg(jsonb_build_object(
                'code', r.code, 'name', r.name, 'installed', r.installed_version,
                'update_version', r.update_version, 'kind', r.kind,
                'security_release', CASE WHEN r.release IS NOT NULL AND jsonb_typeof(r.release) = 'object' THEN
                    jsonb_build_object('version', r.release->>'version', 'severity', coalesce(r.release->>'severity', ''),
                                       'summary', coalesce(r.release->>'summary', ''),
                                       'installable', r.release_installable) END,
                'advisory', CASE WHEN r.advisory IS NOT NULL THEN
                    jsonb_build_object('id', r.advisory->>'id', 'summary', coalesce(r.advisory->>'summary', ''),
                                       'severity', coalesce(r.advisory->>'severity', ''),
                                       'fixed_in', nullif(r.advisory->>'fixed_in', '')) END,
                'security_since', r.security_since) ORDER BY r.n), '[]'::jsonb)
       FROM ranked r WHERE r.n <= @attention_limit::bigint)::jsonb             AS attention,
    (SELECT count(*) FROM attention)::bigint                                   AS attention_total,
    never.code                                                                 AS never_code,
    never.name                                                                 AS never_name,
    oldest_security.since                                                      AS oldest_security_since,
    coalesce(extract(epoch FROM clock_timestamp() - oldest_security.since), 0)::float8 AS oldest_security_seconds
FROM totals
LEFT JOIN last_run ON true
LEFT JOIN never ON true
CROSS JOIN oldest_security;
