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
    sources_unwritten    = @sources_unwritten,
    duration_ms          = (extract(epoch FROM clock_timestamp() - started_at) * 1000)::bigint,
    error                = sqlc.narg(error)
WHERE id = @id;

-- name: CheckRunList :many
-- The newest runs, newest first. A run still marked running whose owner no
-- longer holds a live lease was abandoned: its process died or froze and
-- the lease ran out. Refusals (busy, cooldown, skipped) that follow each
-- other with the same status, trigger and actor fold into one row: every
-- click during a cooldown is recorded, and the history shows them as one
-- line, repeats counting them, first_started_at the first one's start.
-- Only the newest @scan_rows runs are read, so a page costs the same
-- however long the history is.
WITH recent AS (
    SELECT r.id, r.trigger, r.actor, r.started_at, r.finished_at,
           (CASE WHEN r.status = 'running'
                      AND NOT EXISTS (SELECT 1 FROM core_update_lock l
                                      WHERE l.owner = r.owner AND l.expires_at > clock_timestamp())
                 THEN 'abandoned' ELSE r.status END)::text AS status,
           r.sources_fetched, r.sources_not_modified, r.sources_failed, r.sources_skipped,
           r.sources_unwritten, r.duration_ms, r.error
    FROM check_runs r
    ORDER BY r.id DESC
    LIMIT @scan_rows::int
),
marked AS (
    SELECT recent.*,
           CASE WHEN status IN ('busy', 'cooldown', 'skipped')
                     AND lag(status) OVER w = status
                     AND lag(trigger) OVER w = trigger
                     AND lag(actor) OVER w IS NOT DISTINCT FROM actor
                THEN 0 ELSE 1 END AS starts_group
    FROM recent
    WINDOW w AS (ORDER BY id)
),
grouped AS (
    SELECT marked.*, sum(starts_group) OVER (ORDER BY id) AS grp
    FROM marked
),
folds AS (
    SELECT max(id) AS last_id, count(*)::int AS repeats, min(started_at) AS first_started_at
    FROM grouped
    GROUP BY grp
)
-- The row of each group is its newest run's.
SELECT g.id, g.trigger, g.actor, f.first_started_at::timestamptz AS first_started_at, g.started_at, g.finished_at,
       g.status, f.repeats, g.sources_fetched, g.sources_not_modified, g.sources_failed, g.sources_skipped,
       g.sources_unwritten, g.duration_ms, g.error
FROM folds f
JOIN grouped g ON g.id = f.last_id
ORDER BY g.id DESC
LIMIT @max_rows::int;

-- name: CheckRunPurge :execrows
-- Runs older than the retention go, except the newest run that ran: the
-- summary's last check must not turn into "never" after a quiet spell.
DELETE FROM check_runs
WHERE started_at < clock_timestamp() - make_interval(days => @keep_days::int)
  AND id IS DISTINCT FROM (SELECT max(id) FROM check_runs
                           WHERE status NOT IN ('busy', 'cooldown', 'skipped', 'running'));

-- name: FeedSyncPurge :execrows
-- Feed syncs older than the retention go, except each feed's newest and
-- any still running (the next sync of its feed records it as
-- interrupted).
DELETE FROM feed_syncs s
WHERE s.started_at < clock_timestamp() - make_interval(days => @keep_days::int)
  AND s.status <> 'running'
  AND s.id <> (SELECT max(n.id) FROM feed_syncs n WHERE n.kind = s.kind);
