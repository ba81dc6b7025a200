-- Sites (docs/design.md "Many sites"). A registered site's push token is
-- found by its SHA-256, as API tokens are: the lookup compares hashes in
-- an index, never the secret byte by byte in Go.

-- name: SiteCreate :one
INSERT INTO sites (name, owner, token_hash, token_made_at)
VALUES (@name, @owner, @token_hash, clock_timestamp())
RETURNING id, name, owner, created_at, token_made_at, pushed_at;

-- name: SiteList :many
-- Every site, the local one first. stale: a registered site whose last
-- push (or, before its first, its registration) is older than
-- stale_seconds on the database clock; the local site pushes nothing and
-- is never stale.
SELECT id, name, owner, created_at, token_made_at, pushed_at,
       (id <> 1 AND coalesce(pushed_at, created_at)
                    <= clock_timestamp() - make_interval(secs => @stale_seconds::float8))::bool AS stale
FROM sites
ORDER BY id <> 1, name;

-- name: SiteChoices :many
-- The site switcher's sites: the local one first, then by name, the
-- first max_rows of those the principal may see (every site unless
-- limited, then those of ids). Each branch is read by an index (the
-- primary key, sites_name_key), so a page of a fleet of 10,000 sites
-- reads max_rows rows, not the fleet.
(SELECT id, name FROM sites
 WHERE id = 1 AND (NOT @limited::boolean OR 1 = ANY(@ids::bigint[])))
UNION ALL
(SELECT id, name FROM sites
 WHERE id <> 1 AND (NOT @limited::boolean OR id = ANY(@ids::bigint[]))
 ORDER BY name
 LIMIT @max_rows::int);

-- name: SiteGetByName :one
SELECT id, name, owner, created_at, token_made_at, pushed_at,
       (id <> 1 AND coalesce(pushed_at, created_at)
                    <= clock_timestamp() - make_interval(secs => @stale_seconds::float8))::bool AS stale
FROM sites
WHERE name = @name;

-- name: SiteGetByTokenHash :one
-- The site a push token is for; no row: no site has this token (never
-- had, or it was rotated away or the site removed).
SELECT id, name, owner, created_at, token_made_at, pushed_at
FROM sites
WHERE token_hash = @token_hash;

-- name: SiteIDsByName :many
-- The ids of the named sites that exist, to set who sees what.
SELECT id, name FROM sites WHERE name = ANY(@names::text[]) ORDER BY id;

-- name: SiteRotateToken :one
-- A new push token for a registered site; the old one stops working with
-- this commit. The local site has none: no row.
UPDATE sites SET token_hash = @token_hash, token_made_at = clock_timestamp()
WHERE name = @name AND id <> 1
RETURNING id, name, owner, created_at, token_made_at, pushed_at;

-- name: SiteDelete :one
-- Removes a registered site with its installed tree and history (ON
-- DELETE CASCADE); the local site stays: no row.
DELETE FROM sites WHERE name = @name AND id <> 1
RETURNING id, name, owner, created_at, token_made_at, pushed_at;

-- name: UserSetSitesLimited :execrows
UPDATE users SET sites_limited = @sites_limited WHERE id = @id;

-- name: UserSitesClear :exec
DELETE FROM user_sites WHERE user_id = @user_id;

-- name: UserSitesAdd :exec
INSERT INTO user_sites (user_id, site_id)
SELECT @user_id, unnest(@site_ids::bigint[])
ON CONFLICT DO NOTHING;

-- name: UserSites :one
-- Whether a user is limited to some sites, and the names of those sites.
SELECT u.sites_limited,
       coalesce((SELECT array_agg(s.name ORDER BY s.name)
                 FROM user_sites us JOIN sites s ON s.id = us.site_id
                 WHERE us.user_id = u.id), '{}')::text[] AS site_names
FROM users u
WHERE u.id = @id;

-- name: TokenSitesSet :exec
-- A token limited to some sites at its creation (within its owner's: the
-- caller checked).
WITH limited AS (
    UPDATE api_tokens SET sites_limited = true WHERE id = @token_id
)
INSERT INTO token_sites (token_id, site_id)
SELECT @token_id, unnest(@site_ids::bigint[])
ON CONFLICT DO NOTHING;

-- name: TokenSiteNames :many
-- The names of the sites each limited token is limited to.
SELECT ts.token_id, s.name
FROM token_sites ts JOIN sites s ON s.id = ts.site_id
ORDER BY ts.token_id, s.name;
