-- A site's push (docs/design.md "Many sites"): the site's tree is written
-- as a lockfile sync writes it (queries/tree.sql); the push itself is
-- recorded on the site.

-- name: SitePushed :one
-- The site pushed a lockfile that was accepted (changed or not), on the
-- database's clock.
UPDATE sites SET pushed_at = clock_timestamp() WHERE id = @id RETURNING pushed_at::timestamptz;
