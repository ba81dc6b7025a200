-- name: NpmDependencyList :many
-- What is stored of the named dependencies' documents, from one registry.
SELECT name, etag, last_modified, first_published, latest, published::text AS published
FROM npm_dependencies
WHERE registry = @registry AND name = ANY (@names::text[]);

-- name: NpmDependencySave :exec
-- Stores what a check read of dependencies' documents (one JSON array of
-- store.NpmDependency), replacing what an older epoch stored.
INSERT INTO npm_dependencies AS d (registry, name, etag, last_modified, first_published, latest, published, epoch)
SELECT e->>'registry', e->>'name', e->>'etag', e->>'last_modified', (e->>'first_published')::timestamptz,
       e->>'latest', coalesce(e->'published', '{}'::jsonb), @epoch
FROM jsonb_array_elements(@dependencies::jsonb) AS e
ON CONFLICT (registry, name) DO UPDATE
SET etag            = EXCLUDED.etag,
    last_modified   = EXCLUDED.last_modified,
    first_published = EXCLUDED.first_published,
    latest          = EXCLUDED.latest,
    published       = EXCLUDED.published,
    read_at         = clock_timestamp(),
    epoch           = EXCLUDED.epoch
WHERE d.epoch <= EXCLUDED.epoch;
