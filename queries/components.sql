-- name: ComponentList :many
SELECT code, name, installed_version, source_url, pinned_key
FROM components
ORDER BY code;

-- name: ComponentGet :one
SELECT code, name, installed_version, source_url, pinned_key
FROM components
WHERE code = @code;

-- name: ComponentUpsert :exec
INSERT INTO components (code, name, installed_version, source_url, pinned_key)
VALUES (@code, @name, @installed_version, sqlc.narg(source_url), sqlc.narg(pinned_key))
ON CONFLICT (code) DO UPDATE
SET name              = EXCLUDED.name,
    installed_version = EXCLUDED.installed_version,
    source_url        = EXCLUDED.source_url,
    pinned_key        = EXCLUDED.pinned_key,
    updated_at        = clock_timestamp()
WHERE (components.name, components.installed_version, components.source_url, components.pinned_key)
      IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.installed_version, EXCLUDED.source_url, EXCLUDED.pinned_key);

-- name: ComponentDeleteMissing :execrows
DELETE FROM components
WHERE code <> ALL (@codes::text[]);
