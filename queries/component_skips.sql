-- name: SkipList :many
-- Every standing skip of the site, by component.
SELECT code, version, reason, actor, user_id, from_manifest, skipped_at, site_id
FROM component_skips
WHERE site_id = @site
ORDER BY code;

-- name: SkipGet :one
SELECT code, version, reason, actor, user_id, from_manifest, skipped_at, site_id
FROM component_skips
WHERE site_id = @site AND code = @code::text;

-- name: SkipPut :one
-- Skips version of the component, replacing its skip; the previous one,
-- if any, comes back for the audit log.
WITH prev AS (
    SELECT k.code, k.version FROM component_skips k WHERE k.site_id = @site::bigint AND k.code = @code::text
),
put AS (
    INSERT INTO component_skips (site_id, code, version, reason, actor, user_id, from_manifest)
    VALUES (@site::bigint, @code::text, @version::text, @reason::text, @actor::text, sqlc.narg(user_id)::bigint,
            @from_manifest::boolean)
    ON CONFLICT (site_id, code) DO UPDATE
    SET version = EXCLUDED.version, reason = EXCLUDED.reason, actor = EXCLUDED.actor, user_id = EXCLUDED.user_id,
        from_manifest = EXCLUDED.from_manifest, skipped_at = clock_timestamp()
    RETURNING code
)
SELECT coalesce((SELECT version FROM prev), '')::text AS previous FROM put;

-- name: SkipDelete :one
-- Ends the component's skip; the version it skipped comes back ('' when
-- there was none).
WITH gone AS (
    DELETE FROM component_skips WHERE site_id = @site::bigint AND code = @code::text RETURNING version
)
SELECT coalesce((SELECT version FROM gone), '')::text AS version;

-- name: PinDowngradePut :exec
INSERT INTO pin_downgrades (site_id, code, source_url, pin, reason)
VALUES (@site::bigint, @code::text, @source_url::text, @pin::text, @reason::text)
ON CONFLICT (site_id, code) DO UPDATE
SET source_url = EXCLUDED.source_url, pin = EXCLUDED.pin, reason = EXCLUDED.reason, changed_at = clock_timestamp();

-- name: SkipVersionsFleet :many
-- Every site's skipped versions, as a check's evaluation reads them.
SELECT site_id, code, version
FROM component_skips
ORDER BY site_id, code;
