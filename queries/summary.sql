-- name: SummaryRead :one
-- One statement over the read model, so the counts agree with each other
-- and with the catalog and source health.
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
                FROM notification_events WHERE state = 'pending'), 0)::float8  AS oldest_pending_seconds
FROM totals
LEFT JOIN last_run ON true;
