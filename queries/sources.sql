-- name: SourceList :many
SELECT url, document, signature, sequence, sequence_key, etag, last_modified,
       expires_at, fetched_at, last_success_at, last_attempt_at, last_error,
       last_error_at, consecutive_failures, signature_state, epoch
FROM sources
ORDER BY url;

-- name: SourceGet :one
SELECT url, document, signature, sequence, sequence_key, etag, last_modified,
       expires_at, fetched_at, last_success_at, last_attempt_at, last_error,
       last_error_at, consecutive_failures, signature_state, epoch
FROM sources
WHERE url = @url;

-- name: SourceSaveDocument :exec
-- A new valid document (200): it replaces the stored one and clears errors.
INSERT INTO sources (url, document, signature, sequence, sequence_key, etag, last_modified,
                     expires_at, fetched_at, last_success_at, last_attempt_at,
                     last_error, last_error_at, consecutive_failures, signature_state, epoch)
VALUES (@url, @document, sqlc.narg(signature), @sequence, sqlc.narg(sequence_key), sqlc.narg(etag),
        sqlc.narg(last_modified), sqlc.narg(expires_at), clock_timestamp(), clock_timestamp(),
        clock_timestamp(), NULL, NULL, 0, @signature_state, @epoch)
ON CONFLICT (url) DO UPDATE
SET document             = EXCLUDED.document,
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
    last_error_at        = NULL,
    consecutive_failures = 0,
    signature_state      = EXCLUDED.signature_state,
    epoch                = EXCLUDED.epoch;

-- name: SourceSaveUnchanged :exec
-- A success that keeps the stored document: 304, or the same sequence again.
UPDATE sources
SET last_success_at      = clock_timestamp(),
    last_attempt_at      = clock_timestamp(),
    etag                 = coalesce(sqlc.narg(etag), etag),
    last_modified        = coalesce(sqlc.narg(last_modified), last_modified),
    last_error           = NULL,
    last_error_at        = NULL,
    consecutive_failures = 0,
    epoch                = @epoch
WHERE url = @url;

-- name: SourceSaveFailure :exec
-- A failed fetch or a refused document: the stored document stays.
INSERT INTO sources (url, last_attempt_at, last_error, last_error_at, consecutive_failures, epoch)
VALUES (@url, clock_timestamp(), @error, clock_timestamp(), 1, @epoch)
ON CONFLICT (url) DO UPDATE
SET last_attempt_at      = EXCLUDED.last_attempt_at,
    last_error           = EXCLUDED.last_error,
    last_error_at        = EXCLUDED.last_error_at,
    consecutive_failures = sources.consecutive_failures + 1,
    epoch                = EXCLUDED.epoch;

-- name: SourceDeleteOrphans :execrows
DELETE FROM sources s
WHERE NOT EXISTS (SELECT 1 FROM components c WHERE c.source_url = s.url);
