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
SELECT id, trigger, actor, owner, epoch, started_at, finished_at, status, sources_fetched,
       sources_not_modified, sources_failed, sources_skipped, duration_ms, error
FROM check_runs
ORDER BY id DESC
LIMIT @max_rows;
