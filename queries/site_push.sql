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
