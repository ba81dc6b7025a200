-- name: CheckRunStart :one
-- History rows are deliberately not fenced: a run that lost its lease must
-- still be able to record that it did.
INSERT INTO check_runs (trigger, actor, owner, epoch, status)
VALUES (@trigger, sqlc.narg(actor), sqlc.narg(owner), sqlc.narg(epoch), 'running')
RETURNING id;

-- name: CheckRunRecordRefused :one
INSERT INTO check_runs (trigger, actor, status, finished_at, duration_ms)
VALUES (@trigger, sqlc.narg(actor), @status, clock_timestamp(), 0)
RETURNING id;

-- name: CheckRunFinish :exec
UPDATE check_runs
SET finished_at          = clock_timestamp(),
    status               = @status,
    sources_fetched      = @sources_fetched,
    sources_not_modified = @sources_not_modified,
    sources_failed       = @sources_failed,
    sources_skipped      = @sources_skipped,
    duration_ms          = (extract(epoch FROM clock_timestamp() - started_at) * 1000)::bigint,
    error                = sqlc.narg(error)
WHERE id = @id;

-- name: CheckRunList :many
-- A run still marked running whose owner no longer holds a live lease was
-- abandoned: its process died or froze and the lease ran out.
SELECT r.id, r.trigger, r.actor, r.started_at, r.finished_at,
       (CASE WHEN r.status = 'running'
                  AND NOT EXISTS (SELECT 1 FROM core_update_lock l
                                  WHERE l.owner = r.owner AND l.expires_at > clock_timestamp())
             THEN 'abandoned' ELSE r.status END)::text AS status,
       r.sources_fetched, r.sources_not_modified, r.sources_failed, r.sources_skipped,
       r.duration_ms, r.error
FROM check_runs r
ORDER BY r.id DESC
LIMIT @max_rows;

-- name: CheckRunPurge :execrows
-- Runs older than the retention go, except the newest run that ran: the
-- summary's last check must not turn into "never" after a quiet spell.
DELETE FROM check_runs
WHERE started_at < clock_timestamp() - make_interval(days => @keep_days::int)
  AND id IS DISTINCT FROM (SELECT max(id) FROM check_runs
                           WHERE status NOT IN ('busy', 'cooldown', 'skipped', 'running'));
