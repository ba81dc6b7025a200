-- name: InputRefusalRecord :exec
-- Records that the site's input was refused (serve's look at the local
-- site's file, a registered site's push): since moves only when the
-- error says something else than the one recorded. One row per site and
-- input, however often it is refused. A push's refusal is recorded only
-- while the site's last push accepted is the one before it began
-- (@pushed_before, sites.pushed_at then; null for the local site, which
-- pushes nothing): a push accepted meanwhile, racing it, stands.
INSERT INTO input_refusals (site_id, input, path, error, since, refused_at)
SELECT @site_id, @input, @path, @error, now(), now()
FROM sites
WHERE id = @site_id AND pushed_at IS NOT DISTINCT FROM sqlc.narg(pushed_before)::timestamptz
ON CONFLICT (site_id, input) DO UPDATE
SET path = excluded.path,
    error = excluded.error,
    since = CASE WHEN input_refusals.error = excluded.error AND input_refusals.path = excluded.path
                 THEN input_refusals.since ELSE excluded.since END,
    refused_at = excluded.refused_at;

-- name: InputRefusalClear :execrows
-- The site's input was accepted: it is refused no more.
DELETE FROM input_refusals WHERE site_id = @site_id AND input = @input;

-- name: InputRefusalList :many
-- The site's inputs refused now.
SELECT input, path, error, since, refused_at FROM input_refusals WHERE site_id = @site_id ORDER BY input;
