-- name: ResultUpsert :execrows
-- Writes an evaluation only while the component is still installed at the
-- version it was evaluated for; a concurrent manifest sync that changed the
-- version has re-evaluated the row itself and must not be overwritten.
INSERT INTO component_results (code, source_url, installed_version, latest_version, update_version,
                               update_available, security, needs_newer_core, required_core, vulnerable,
                               advisories, evaluation, release_url, stale, last_success_at,
                               last_error, last_error_at, evaluated_at, epoch)
SELECT c.code, c.source_url, c.installed_version, sqlc.narg(latest_version)::text,
       sqlc.narg(update_version)::text, @update_available::boolean, @security::boolean,
       @needs_newer_core::boolean, sqlc.narg(required_core)::text, @vulnerable::boolean,
       @advisories::jsonb, @evaluation::jsonb, sqlc.narg(release_url)::text, @stale::boolean,
       CASE WHEN @succeeded::boolean THEN clock_timestamp() END, sqlc.narg(last_error)::text,
       CASE WHEN sqlc.narg(last_error)::text IS NULL THEN NULL ELSE clock_timestamp() END,
       clock_timestamp(), @epoch::bigint
FROM components c
WHERE c.code = @code::text
  AND c.installed_version = @installed_version::text
  AND c.source_url IS NOT DISTINCT FROM sqlc.narg(source_url)::text
ON CONFLICT (code) DO UPDATE
SET source_url        = EXCLUDED.source_url,
    installed_version = EXCLUDED.installed_version,
    latest_version    = EXCLUDED.latest_version,
    update_version    = EXCLUDED.update_version,
    update_available  = EXCLUDED.update_available,
    security          = EXCLUDED.security,
    needs_newer_core  = EXCLUDED.needs_newer_core,
    required_core     = EXCLUDED.required_core,
    vulnerable        = EXCLUDED.vulnerable,
    advisories        = EXCLUDED.advisories,
    evaluation        = EXCLUDED.evaluation,
    release_url       = EXCLUDED.release_url,
    stale             = EXCLUDED.stale,
    last_success_at   = coalesce(EXCLUDED.last_success_at, component_results.last_success_at),
    last_error        = EXCLUDED.last_error,
    last_error_at     = EXCLUDED.last_error_at,
    evaluated_at      = EXCLUDED.evaluated_at,
    epoch             = EXCLUDED.epoch;

-- name: ResultRecordFailure :execrows
-- The source failed: the components keep their last evaluation and last
-- success, and show the error.
INSERT INTO component_results (code, source_url, installed_version, last_error, last_error_at, epoch)
SELECT c.code, c.source_url, c.installed_version, @error::text, clock_timestamp(), @epoch::bigint
FROM components c
WHERE c.source_url = @source_url::text
ON CONFLICT (code) DO UPDATE
SET last_error    = EXCLUDED.last_error,
    last_error_at = EXCLUDED.last_error_at,
    epoch         = EXCLUDED.epoch;

-- name: ResultDeleteOrphans :execrows
-- Results of components no longer installed, or whose source changed.
DELETE FROM component_results r
WHERE NOT EXISTS (SELECT 1 FROM components c
                  WHERE c.code = r.code AND c.source_url IS NOT DISTINCT FROM r.source_url);

-- name: ResultList :many
SELECT code, source_url, installed_version, latest_version, update_version, update_available,
       security, needs_newer_core, required_core, vulnerable, advisories, evaluation, release_url,
       stale, last_success_at, last_error, last_error_at, evaluated_at, epoch
FROM component_results
ORDER BY code;
