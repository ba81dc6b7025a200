-- name: TreeFixDocumentList :many
-- The stored documents of the packages named (table tree_fix_documents).
SELECT name, floor, etag, last_modified, document, fetched_at
FROM tree_fix_documents
WHERE name = ANY(@names::text[])
ORDER BY name;

-- name: TreeFixDocumentSave :exec
-- A package's document as fetched, or its validators and fetch time when
-- the registry answered 304 (document null: the stored one stays).
INSERT INTO tree_fix_documents (name, floor, etag, last_modified, document, fetched_at, epoch)
VALUES (@name, @floor, @etag, @last_modified, coalesce(sqlc.narg(document)::jsonb, '{}'), clock_timestamp(), @epoch)
ON CONFLICT (name) DO UPDATE
SET floor         = CASE WHEN sqlc.narg(document)::jsonb IS NULL THEN tree_fix_documents.floor ELSE EXCLUDED.floor END,
    etag          = EXCLUDED.etag,
    last_modified = EXCLUDED.last_modified,
    document      = coalesce(sqlc.narg(document)::jsonb, tree_fix_documents.document),
    fetched_at    = EXCLUDED.fetched_at,
    epoch         = EXCLUDED.epoch;

-- name: TreeFixDocumentKeep :exec
-- Drops the documents of the packages no finding needs any more.
DELETE FROM tree_fix_documents
WHERE name <> ALL(@names::text[]);

-- name: TreeFixSiteIs :one
-- Whether site's tree is still the one (@tree_hash) whose fixes a check
-- decided: a sync or a push that moved it meanwhile makes the check pass
-- its fixes over (the next check decides them on the new tree).
SELECT EXISTS (SELECT 1 FROM tree_state WHERE site_id = @site AND tree_hash = @tree_hash::bytea)::boolean;

-- name: TreeFixClear :exec
-- Clears a site's fixes before a check writes its own.
DELETE FROM tree_fixes WHERE site_id = @site;

-- name: TreeFixSave :exec
-- The fixes a check decided, one row per finding; a package instance no
-- longer in the tree is passed over.
INSERT INTO tree_fixes (site_id, package_id, advisory_id, fix, direct, epoch)
SELECT @site::bigint, f.package_id, f.advisory_id, f.fix, f.direct, @epoch
FROM (SELECT unnest(@package_ids::text[])  AS package_id,
             unnest(@advisory_ids::text[]) AS advisory_id,
             unnest(@fixes::jsonb[])       AS fix,
             unnest(@directs::boolean[])   AS direct) AS f
WHERE EXISTS (SELECT 1 FROM tree_packages p WHERE p.site_id = @site AND p.id = f.package_id)
ON CONFLICT (site_id, package_id, advisory_id) DO UPDATE
SET fix = EXCLUDED.fix, direct = EXCLUDED.direct, decided_at = EXCLUDED.decided_at, epoch = EXCLUDED.epoch;

-- name: TreeFixList :many
-- Every finding's fix, by package instance and advisory.
SELECT package_id, advisory_id, fix, direct, decided_at
FROM tree_fixes
WHERE site_id = @site
ORDER BY package_id, advisory_id;
