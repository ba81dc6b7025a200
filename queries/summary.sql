-- name: SummaryRead :one
-- One statement, so the counts agree with each other. A component counts
-- from the result evaluated for its current installed version only.
WITH c AS (
    SELECT c.code, c.source_url, r.update_available, r.security, r.vulnerable, r.stale, r.last_success_at
    FROM components c
    LEFT JOIN component_results r
           ON r.code = c.code AND r.installed_version = c.installed_version
          AND r.source_url IS NOT DISTINCT FROM c.source_url
),
last_run AS (
    SELECT status, trigger, finished_at
    FROM check_runs
    WHERE status NOT IN ('busy', 'cooldown', 'skipped', 'running')
    ORDER BY id DESC
    LIMIT 1
),
oldest AS (
    SELECT min(last_success_at) AS oldest_success_at, bool_or(last_success_at IS NULL) AS any_never
    FROM c
    WHERE source_url IS NOT NULL
)
SELECT
    (SELECT count(*) FROM c)::bigint                                            AS components,
    (SELECT count(*) FROM c WHERE update_available)::bigint                     AS updates_available,
    (SELECT count(*) FROM c WHERE security)::bigint                             AS security_updates,
    (SELECT count(*) FROM c WHERE vulnerable)::bigint                           AS vulnerable,
    (SELECT count(*) FROM sources s
      WHERE s.last_error IS NOT NULL
        AND EXISTS (SELECT 1 FROM components x WHERE x.source_url = s.url))::bigint AS failing_sources,
    (SELECT count(*) FROM c
      WHERE source_url IS NOT NULL
        AND (stale OR last_success_at < clock_timestamp() - interval '48 hours'))::bigint AS stale,
    -- null while any component with a source has never succeeded
    coalesce(oldest.any_never, false)::boolean                                 AS any_never_succeeded,
    oldest.oldest_success_at,
    last_run.status                                                             AS last_status,
    last_run.trigger                                                            AS last_trigger,
    last_run.finished_at                                                        AS last_finished_at,
    (SELECT owner IS NOT NULL AND expires_at > clock_timestamp()
       FROM core_update_lock WHERE name = 'check')::boolean                     AS check_running
FROM oldest
LEFT JOIN last_run ON true;
