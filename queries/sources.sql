-- name: SourceList :many
SELECT url, document, signature, sequence, sequence_key, etag, last_modified,
       expires_at, fetched_at, last_success_at, last_attempt_at, last_error,
       last_error_at, consecutive_failures, signature_state, epoch, document_hash, registry
FROM sources
ORDER BY url;

-- name: SourceGet :one
SELECT url, document, signature, sequence, sequence_key, etag, last_modified,
       expires_at, fetched_at, last_success_at, last_attempt_at, last_error,
       last_error_at, consecutive_failures, signature_state, epoch, document_hash, registry
FROM sources
WHERE url = @url;

-- name: SourceSequenceList :many
-- The highest sequence accepted per source and key ('' for unsigned).
SELECT url, key, sequence
FROM source_sequences
ORDER BY url, key;

-- name: SourceSaveDocument :one
-- A new valid document (200): it replaces the stored one and clears errors.
-- Returns how many components use the source now.
INSERT INTO sources (url, document, document_hash, signature, sequence, sequence_key, etag, last_modified,
                     expires_at, fetched_at, last_success_at, last_attempt_at,
                     last_error, last_error_at, consecutive_failures, signature_state, epoch, verified_by, registry)
VALUES (@url, @document::bytea, sha256(@document::bytea), sqlc.narg(signature), @sequence, sqlc.narg(sequence_key),
        sqlc.narg(etag), sqlc.narg(last_modified), sqlc.narg(expires_at), clock_timestamp(), clock_timestamp(),
        clock_timestamp(), NULL, NULL, 0, @signature_state, @epoch, sqlc.narg(verified_by), sqlc.narg(registry))
ON CONFLICT (url) DO UPDATE
SET document             = EXCLUDED.document,
    document_hash        = EXCLUDED.document_hash,
    signature            = EXCLUDED.signature,
    sequence             = EXCLUDED.sequence,
    sequence_key         = EXCLUDED.sequence_key,
    etag                 = EXCLUDED.etag,
    last_modified        = EXCLUDED.last_modified,
    expires_at           = EXCLUDED.expires_at,
    fetched_at           = EXCLUDED.fetched_at,
    last_success_at      = EXCLUDED.last_success_at,
    last_attempt_at      = EXCLUDED.last_attempt_at,
    last_error           = NULL,
    last_error_kind      = NULL,
    last_error_args      = NULL,
    last_error_at        = NULL,
    failing_since        = NULL,
    consecutive_failures = 0,
    signature_state      = EXCLUDED.signature_state,
    unused_since         = NULL,
    epoch                = EXCLUDED.epoch,
    verified_by          = EXCLUDED.verified_by,
    registry             = EXCLUDED.registry
RETURNING (SELECT count(*) FROM components c WHERE c.source_url = sources.url)::bigint AS components;

-- name: SourceSequenceRecord :exec
-- Rollback state: the highest sequence seen under a key only grows.
INSERT INTO source_sequences (url, key, sequence, epoch)
VALUES (@url, @key, @sequence, @epoch)
ON CONFLICT (url, key) DO UPDATE
SET sequence = greatest(source_sequences.sequence, EXCLUDED.sequence),
    seen_at  = clock_timestamp(),
    epoch    = EXCLUDED.epoch;

-- name: SourceSaveUnchanged :one
-- A success that keeps the stored document: 304, or the same sequence again.
-- An npm source's trust is judged again at each check (its registry's keys
-- may have changed): signature_state and verified_by, when given, replace
-- the stored ones.
UPDATE sources
SET signature_state      = coalesce(sqlc.narg(signature_state)::text, signature_state),
    verified_by          = CASE WHEN sqlc.narg(signature_state)::text IS NULL THEN verified_by ELSE sqlc.narg(verified_by)::text END,
    last_success_at      = clock_timestamp(),
    last_attempt_at      = clock_timestamp(),
    etag                 = coalesce(sqlc.narg(etag), etag),
    last_modified        = coalesce(sqlc.narg(last_modified), last_modified),
    last_error           = NULL,
    last_error_kind      = NULL,
    last_error_args      = NULL,
    last_error_at        = NULL,
    failing_since        = NULL,
    consecutive_failures = 0,
    unused_since         = NULL,
    epoch                = @epoch
WHERE url = @url
RETURNING (SELECT count(*) FROM components c WHERE c.source_url = sources.url)::bigint AS components;

-- name: SourceSaveFailure :one
-- A failed fetch or a refused document: the stored document stays. The
-- kind and its arguments are what the pages word (readmodel.ErrorKind,
-- readmodel.FailureArgs); the error is the technical text.
INSERT INTO sources (url, last_attempt_at, last_error, last_error_kind, last_error_args, last_error_at,
                     failing_since, consecutive_failures, epoch)
VALUES (@url, clock_timestamp(), @error, @kind, sqlc.narg(args)::jsonb, clock_timestamp(), clock_timestamp(), 1, @epoch)
ON CONFLICT (url) DO UPDATE
SET last_attempt_at      = EXCLUDED.last_attempt_at,
    last_error           = EXCLUDED.last_error,
    last_error_kind      = EXCLUDED.last_error_kind,
    last_error_args      = EXCLUDED.last_error_args,
    last_error_at        = EXCLUDED.last_error_at,
    failing_since        = coalesce(sources.failing_since, EXCLUDED.failing_since),
    consecutive_failures = sources.consecutive_failures + 1,
    unused_since         = NULL,
    epoch                = EXCLUDED.epoch
RETURNING (SELECT count(*) FROM components c WHERE c.source_url = sources.url)::bigint AS components;

-- name: SourceMarkUse :execrows
-- A source no component uses any more starts its 30 days of retention (its
-- rollback state must outlive a plugin removed for one check); one in use
-- again stops it.
UPDATE sources s
SET unused_since = CASE WHEN EXISTS (SELECT 1 FROM components c WHERE c.source_url = s.url)
                        THEN NULL ELSE clock_timestamp() END,
    epoch        = @epoch
WHERE EXISTS (SELECT 1 FROM components c WHERE c.source_url = s.url) = (s.unused_since IS NOT NULL);

-- name: SourceDeleteUnused :execrows
-- A source unused for 30 days (readmodel.UnusedSourceKept) goes.
DELETE FROM sources s
WHERE s.unused_since < clock_timestamp() - interval '30 days'
  AND NOT EXISTS (SELECT 1 FROM components c WHERE c.source_url = s.url);

-- name: RegistryKeysList :many
-- The signing keys pinned for each npm registry.
SELECT registry, keys, key_ids, first_seen_at, changed_at
FROM registry_keys
ORDER BY registry;

-- name: RegistryKeysSave :exec
-- Pins a registry's keys: on first sight, or when it publishes others
-- (changed_at is then now).
INSERT INTO registry_keys (registry, keys, key_ids, epoch)
VALUES (@registry, @keys::jsonb, @key_ids::text[], @epoch)
ON CONFLICT (registry) DO UPDATE
SET keys       = EXCLUDED.keys,
    key_ids    = EXCLUDED.key_ids,
    changed_at = clock_timestamp(),
    epoch      = EXCLUDED.epoch;
