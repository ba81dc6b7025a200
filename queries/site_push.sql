-- A site's push (docs/design.md "Many sites"): the site's tree is written
-- as a lockfile sync writes it (queries/tree.sql); the push itself is
-- recorded on the site.

-- name: SitePushed :one
-- The site pushed a lockfile that was accepted (changed or not), on the
-- database's clock.
UPDATE sites SET pushed_at = clock_timestamp() WHERE id = @id RETURNING pushed_at::timestamptz;

-- name: SitePushList :many
-- A site's accepted pushes, newest first: its site.push audit rows since
-- it was registered (@since, sites.created_at: a removed site's name
-- registered again starts afresh), read through audit_log_site_push.
SELECT id, at, detail
FROM audit_log
WHERE action = 'site.push' AND detail->>'site' = @site::text AND at >= @since::timestamptz
ORDER BY id DESC
LIMIT @max_rows::int OFFSET @skip_rows::int;

-- name: SitePushRefusalRecord :exec
-- Records that the site's push was refused, in the 422's words: since
-- moves only when the words or the file differ from those recorded; one
-- row per site however often it is refused. Recorded only while the
-- site's last push accepted is the one before the refused push began
-- (@pushed_before, sites.pushed_at when its token was read): a push
-- accepted meanwhile, racing it, stands.
INSERT INTO site_push_refusals (site_id, path, error, since, refused_at)
SELECT id, @path, @error, now(), now()
FROM sites
WHERE id = @site_id AND pushed_at IS NOT DISTINCT FROM sqlc.narg(pushed_before)::timestamptz
ON CONFLICT (site_id) DO UPDATE
SET path = excluded.path,
    error = excluded.error,
    since = CASE WHEN site_push_refusals.error = excluded.error AND site_push_refusals.path = excluded.path
                 THEN site_push_refusals.since ELSE excluded.since END,
    refused_at = excluded.refused_at;

-- name: SitePushRefusalClear :exec
-- The site's push was accepted: its pushes are refused no more.
DELETE FROM site_push_refusals WHERE site_id = @site_id;

-- name: SitePushRefusalGet :many
-- The site's refused push that stands: none or one row.
SELECT path, error, since, refused_at FROM site_push_refusals WHERE site_id = @site_id;
