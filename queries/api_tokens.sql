-- API tokens are found by the SHA-256 of the raw token.

-- name: APITokenCreate :one
-- ttl_seconds 0: the token does not expire. Its end is judged on the
-- database clock, as every use of it is.
INSERT INTO api_tokens (user_id, name, token_hash, expires_at, read_only)
VALUES (@user_id, @name, @token_hash,
        CASE WHEN @ttl_seconds::float8 > 0
             THEN clock_timestamp() + make_interval(secs => @ttl_seconds::float8) END,
        @read_only)
RETURNING id, user_id, name, created_at, last_used_at, expires_at, revoked, read_only;

-- name: APITokenAuthenticate :one
-- Same shape as SessionAuthenticate: live means not revoked, not expired, the
-- user not disabled; last_used_at moves at most once per touch interval.
-- A token that is there but expired comes back too, untouched and with
-- expired set, so that its answer can say it expired; a revoked one, or
-- one of a disabled user, does not come back at all.
WITH found AS (
    SELECT k.id, (k.expires_at IS NOT NULL AND k.expires_at <= clock_timestamp()) AS expired
    FROM api_tokens k
    JOIN users u ON u.id = k.user_id
    WHERE k.token_hash = @token_hash
      AND NOT k.revoked
      AND NOT u.disabled
), touched AS (
    UPDATE api_tokens t
    SET last_used_at = clock_timestamp()
    FROM found
    WHERE t.id = found.id
      AND NOT found.expired
      AND (t.last_used_at IS NULL
           OR t.last_used_at <= clock_timestamp() - make_interval(secs => @touch_seconds::float8))
    RETURNING t.id
)
SELECT k.id, k.user_id, k.name, k.created_at, k.last_used_at, k.expires_at, k.revoked, k.read_only,
       found.expired::bool AS expired,
       -- Seconds left on the database clock (Infinity: no end), so that a
       -- cached principal never outlives its token's end.
       coalesce(extract(epoch FROM k.expires_at - clock_timestamp()), 'Infinity')::float8 AS expires_in_seconds,
       u.email, u.role, u.disabled AS user_disabled, u.created_at AS user_created_at,
       -- The sites the owner may see, and those the token is limited to
       -- (docs/design.md "Who sees what"): it sees where both allow.
       u.sites_limited AS user_sites_limited,
       -- Read only for a limited user: the others, most, cost no lookup.
       CASE WHEN u.sites_limited
            THEN coalesce((SELECT array_agg(us.site_id ORDER BY us.site_id) FROM user_sites us WHERE us.user_id = u.id), '{}')
            ELSE '{}' END::bigint[] AS user_site_ids,
       k.sites_limited AS token_sites_limited,
       CASE WHEN k.sites_limited
            THEN coalesce((SELECT array_agg(ts.site_id ORDER BY ts.site_id) FROM token_sites ts WHERE ts.token_id = k.id), '{}')
            ELSE '{}' END::bigint[] AS token_site_ids
FROM api_tokens k
JOIN users u ON u.id = k.user_id
JOIN found ON found.id = k.id;

-- name: APITokenRevoke :one
-- Returns the owner so that the revocation can be audited; no row: no such
-- token.
UPDATE api_tokens SET revoked = true WHERE id = @id
RETURNING user_id;

-- name: APITokenListWithOwner :many
-- Every token (of one user when user_id is set), with its owner and whether
-- it has expired, judged on the database clock.
SELECT k.id, k.user_id, k.name, k.created_at, k.last_used_at, k.expires_at, k.revoked, k.read_only,
       u.email AS owner_email,
       (k.expires_at IS NOT NULL AND k.expires_at <= clock_timestamp())::bool AS expired,
       k.sites_limited
FROM api_tokens k
JOIN users u ON u.id = k.user_id
WHERE sqlc.narg(user_id)::bigint IS NULL OR k.user_id = sqlc.narg(user_id)::bigint
ORDER BY k.id;

-- name: APITokenGetWithOwner :one
-- One token as APITokenListWithOwner lists it; no row: no such token.
SELECT k.id, k.user_id, k.name, k.created_at, k.last_used_at, k.expires_at, k.revoked, k.read_only,
       u.email AS owner_email,
       (k.expires_at IS NOT NULL AND k.expires_at <= clock_timestamp())::bool AS expired,
       k.sites_limited
FROM api_tokens k
JOIN users u ON u.id = k.user_id
WHERE k.id = @id;
