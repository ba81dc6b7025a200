-- Lease statements; the model and the lock order are in internal/lease/doc.go.

-- name: LeaseBegin :exec
-- Timeouts, then the advisory lock (upcheck_lease_begin).
SELECT upcheck_lease_begin(@key::bigint, @lock_timeout::text, @statement_timeout::text, @idle_timeout::text);

-- name: LeaseBeginFence :one
-- LeaseBegin, then the row lock and the ownership check, in one round trip:
-- the epoch, or -1 when the owner does not hold a live lease (epochs start
-- at 1).
SELECT coalesce(upcheck_lease_fence(@key::bigint, @name::text, @owner::uuid,
                                    @lock_timeout::text, @statement_timeout::text, @idle_timeout::text), -1)::bigint AS epoch;

-- name: LeaseGetForUpdate :one
-- The period begins at @period_start when given (a scheduled run's fire
-- time), otherwise at the start of the window of @period_seconds, aligned to
-- the Unix epoch, that contains the database's now.
WITH c AS (SELECT clock_timestamp() AS t)
SELECT l.owner,
       l.epoch,
       (l.owner IS NOT NULL AND l.expires_at > c.t)::boolean AS live,
       (l.last_completed_at IS NOT NULL
        AND l.last_completed_at >= coalesce(sqlc.narg(period_start)::timestamptz,
                                            to_timestamp(floor(extract(epoch FROM c.t) / @period_seconds::float8) * @period_seconds::float8)))::boolean AS completed_in_period,
       greatest(0, ceil(extract(epoch FROM (l.last_manual_at + make_interval(secs => @cooldown_seconds::float8)) - c.t)))::bigint AS cooldown_left
FROM core_update_lock l, c
WHERE l.name = @name
FOR UPDATE OF l;

-- name: LeaseTake :one
-- Repeats the "free" and cooldown conditions so that, even without the locks
-- taken before it, two takers over an expired row can never both win: under
-- READ COMMITTED the second UPDATE re-evaluates this WHERE on the winner's row.
UPDATE core_update_lock
SET owner          = @owner::uuid,
    epoch          = epoch + 1,
    expires_at     = clock_timestamp() + make_interval(secs => @lease_seconds::float8),
    acquired_at    = clock_timestamp(),
    trigger        = @trigger::text,
    last_manual_at = CASE WHEN @manual::boolean THEN clock_timestamp() ELSE last_manual_at END
WHERE name = @name
  AND (owner IS NULL OR expires_at <= clock_timestamp())
  AND (NOT @manual::boolean
       OR last_manual_at IS NULL
       OR last_manual_at + make_interval(secs => @cooldown_seconds::float8) <= clock_timestamp())
RETURNING epoch;

-- name: LeaseRenew :one
UPDATE core_update_lock
SET expires_at = clock_timestamp() + make_interval(secs => @lease_seconds::float8)
WHERE name = @name
  AND owner = @owner::uuid
  AND expires_at > clock_timestamp()
RETURNING epoch;

-- name: LeaseRelease :execrows
UPDATE core_update_lock
SET owner             = NULL,
    expires_at        = NULL,
    last_completed_at = CASE WHEN @completed::boolean AND expires_at > clock_timestamp()
                             THEN clock_timestamp() ELSE last_completed_at END
WHERE name = @name
  AND owner = @owner::uuid;

-- name: LeaseState :one
-- A read for status displays; takes no lock and decides nothing.
SELECT owner, epoch, expires_at, last_manual_at, last_completed_at, trigger,
       (owner IS NOT NULL AND expires_at > clock_timestamp())::boolean AS live,
       (last_completed_at IS NULL
        OR last_completed_at < clock_timestamp() - make_interval(secs => @max_age_seconds::float8))::boolean AS completion_older
FROM core_update_lock
WHERE name = @name;
