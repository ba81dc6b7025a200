-- name: SourceTrustList :many
-- The stored trust of every source (table source_trust); a row applies only
-- while its pin is the pin of the source's components.
SELECT url, pin, keys, version, checked_at
FROM source_trust
ORDER BY url;

-- name: SourceTrustSave :exec
-- The source's trust as the check decided it, written with the source's
-- row in the same fenced write (the row must exist: written before).
INSERT INTO source_trust (url, pin, keys, version, statement, statement_signature, changed_at, checked_at, epoch)
VALUES (@url, @pin, sqlc.narg(keys), @version, sqlc.narg(statement), sqlc.narg(statement_signature),
        CASE WHEN @changed::boolean THEN clock_timestamp() END, sqlc.narg(checked_at), @epoch)
ON CONFLICT (url) DO UPDATE
SET pin                 = EXCLUDED.pin,
    keys                = EXCLUDED.keys,
    version             = EXCLUDED.version,
    statement           = CASE WHEN @changed::boolean OR EXCLUDED.pin <> source_trust.pin THEN EXCLUDED.statement ELSE source_trust.statement END,
    statement_signature = CASE WHEN @changed::boolean OR EXCLUDED.pin <> source_trust.pin THEN EXCLUDED.statement_signature ELSE source_trust.statement_signature END,
    changed_at          = coalesce(EXCLUDED.changed_at, source_trust.changed_at),
    checked_at          = coalesce(EXCLUDED.checked_at, source_trust.checked_at),
    epoch               = EXCLUDED.epoch;

-- name: SourceTrustGet :many
-- The stored trust of one source (none or one row).
SELECT url, pin, keys, version, checked_at
FROM source_trust
WHERE url = @url;
