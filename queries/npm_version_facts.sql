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

-- name: NpmScopeBurstList :many
-- Every burst across a scope stored (few: only versions that were in one).
SELECT registry, name, version, scope, count
FROM npm_scope_bursts;

-- name: NpmScopeBurstSave :exec
-- Stores the bursts across a scope a check saw (one JSON array of
-- store.NpmScopeBurst), keeping the most any check saw.
INSERT INTO npm_scope_bursts AS b (registry, name, version, scope, count, epoch)
SELECT e->>'registry', e->>'name', e->>'version', e->>'scope', (e->>'count')::integer, @epoch
FROM jsonb_array_elements(@bursts::jsonb) AS e
ON CONFLICT (registry, name, version) DO UPDATE
SET count   = EXCLUDED.count,
    scope   = EXCLUDED.scope,
    read_at = clock_timestamp(),
    epoch   = EXCLUDED.epoch
WHERE b.count < EXCLUDED.count;
