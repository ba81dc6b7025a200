-- name: NpmProvenanceList :many
-- The repositories stored of one package's versions' provenance, from one
-- registry.
SELECT version, repository
FROM npm_provenance
WHERE registry = @registry AND name = @name AND version = ANY (@versions::text[]);

-- name: NpmProvenanceSave :exec
-- Stores what a check read of versions' attestation bundles (one JSON
-- array of store.NpmProvenance); a version's row, once stored, stays as
-- it is (its attestations do not change).
INSERT INTO npm_provenance (registry, name, version, repository, epoch)
SELECT e->>'registry', e->>'name', e->>'version', coalesce(e->>'repository', ''), @epoch
FROM jsonb_array_elements(@provenance::jsonb) AS e
ON CONFLICT (registry, name, version) DO NOTHING;
