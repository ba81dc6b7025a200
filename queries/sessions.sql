-- Sessions are found by the SHA-256 of the cookie token; every expiry
-- decision is taken here, on the database clock.

-- name: SessionCreate :one
INSERT INTO sessions (id, user_id, csrf_token, expires_at, user_agent, ip)
VALUES (@id, @user_id, @csrf_token,
        clock_timestamp() + make_interval(secs => @ttl_seconds::float8),
        sqlc.narg(user_agent), sqlc.narg(ip))
RETURNING id, user_id, csrf_token, created_at, last_seen_at, expires_at, user_agent, ip;

-- name: SessionAuthenticate :one
-- A session is live while it is before its absolute expiry, was seen within
-- the idle timeout, and its user is not disabled. Seeing it moves
-- last_seen_at, but at most once per touch interval, so that a busy page does
-- not write on every request; the UPDATE repeats the condition so that
-- concurrent requests write once between them. The row returned shows
-- last_seen_at as it was before this call.
WITH live AS (
    SELECT s.id
    FROM sessions s
    JOIN users u ON u.id = s.user_id
    WHERE s.id = @id
      AND s.expires_at > clock_timestamp()
      AND s.last_seen_at > clock_timestamp() - make_interval(secs => @idle_seconds::float8)
      AND NOT u.disabled
), touched AS (
    UPDATE sessions t
    SET last_seen_at = clock_timestamp()
    FROM live
    WHERE t.id = live.id
      AND t.last_seen_at <= clock_timestamp() - make_interval(secs => @touch_seconds::float8)
    RETURNING t.id
)
SELECT s.id, s.user_id, s.csrf_token, s.created_at, s.last_seen_at, s.expires_at, s.user_agent, s.ip,
       u.email, u.role, u.disabled AS user_disabled, u.created_at AS user_created_at,
       -- The sites the user may see (docs/design.md "Who sees what").
       u.sites_limited AS user_sites_limited,
       -- Read only for a limited user: the others, most, cost no lookup.
       CASE WHEN u.sites_limited
            THEN coalesce((SELECT array_agg(us.site_id ORDER BY us.site_id) FROM user_sites us WHERE us.user_id = u.id), '{}')
            ELSE '{}' END::bigint[] AS user_site_ids
FROM sessions s
JOIN users u ON u.id = s.user_id
JOIN live ON live.id = s.id;

-- name: SessionDelete :execrows
DELETE FROM sessions WHERE id = @id;

-- name: SessionDeleteForUser :execrows
DELETE FROM sessions WHERE user_id = @user_id;

-- name: SessionDeleteDead :execrows
-- Sessions past their absolute expiry or idle for longer than the timeout;
-- user_id 0 means every user's.
DELETE FROM sessions
WHERE (@user_id::bigint = 0 OR user_id = @user_id::bigint)
  AND (expires_at <= clock_timestamp()
       OR last_seen_at <= clock_timestamp() - make_interval(secs => @idle_seconds::float8));
