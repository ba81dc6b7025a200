-- +goose Up
-- One evaluation path and one read model.
--
-- Fetch facts (last success, last error, failures, validators, expiry) live
-- on sources alone and change only when a source is fetched. A result holds
-- only what evaluation derives, plus the inputs it was derived from: the
-- installed version, the core's installed version, the stored document
-- (by hash) and the key that document was verified with. A result counts
-- only while those inputs are the current ones (component_state below), and
-- a write evaluated from other inputs is refused (queries/component_results.sql).
--
-- Dismissals are not an input of evaluation: a result lists every advisory
-- that affects the installed version, and the read model leaves out the
-- dismissed ones when it reads, so a dismissal shows at once and no write
-- can undo it.

-- Results written under the old shape were evaluated with inputs they do not
-- record; the next sync or check evaluates every component again.
TRUNCATE component_results;

ALTER TABLE component_results
    DROP COLUMN stale,
    DROP COLUMN last_success_at,
    DROP COLUMN last_error,
    DROP COLUMN last_error_at,
    DROP COLUMN vulnerable,
    -- The core's installed version when this row was evaluated (for the core
    -- itself, its own version).
    ADD COLUMN core_version  text  NOT NULL,
    -- sha256 of the stored document evaluated (sources.document_hash).
    ADD COLUMN document_hash bytea NOT NULL,
    -- The pinned key the document was verified with; null: unsigned.
    ADD COLUMN verified_key  text,
    -- Why the component could not be evaluated from the document (its
    -- package is missing, a version does not parse); null when it was.
    ADD COLUMN eval_error    text,
    -- The ids of the advisories affecting installed_version, and of those
    -- with no fixed version: the read model compares them with the
    -- dismissals without reading the JSON.
    ADD COLUMN advisory_ids  text[] NOT NULL DEFAULT '{}',
    ADD COLUMN no_fix_ids    text[] NOT NULL DEFAULT '{}';

COMMENT ON COLUMN component_results.advisories IS
    'every advisory affecting installed_version, dismissed or not';

ALTER TABLE sources
    ADD COLUMN document_hash bytea,
    -- Set by the clean-up while no component uses the source; the row (and
    -- with it the rollback state) is deleted 30 days later.
    ADD COLUMN unused_since  timestamptz;
UPDATE sources SET document_hash = sha256(document) WHERE document IS NOT NULL;

-- Rollback protection: the highest sequence accepted per source and key
-- ('' for unsigned), kept across key changes so that returning to an earlier
-- key does not let an older document back in.
CREATE TABLE source_sequences (
    url      text        NOT NULL REFERENCES sources (url) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    key      text        NOT NULL,
    sequence bigint      NOT NULL,
    seen_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    epoch    bigint      NOT NULL,
    PRIMARY KEY (url, key)
);
INSERT INTO source_sequences (url, key, sequence, epoch)
SELECT url, coalesce(sequence_key, ''), sequence, epoch FROM sources WHERE sequence IS NOT NULL;

-- The derived flags of a source, judged when read, on the database clock.
-- Stale: not fetched successfully for 48 hours, or never, or its stored
-- document's own expiry has passed, whatever the last fetch did.
-- Declared STABLE although clock_timestamp() moves within a statement: a
-- view whose columns call a VOLATILE function is not merged into the query
-- that reads it, and every column of every row would be computed. Within
-- one statement the clock moves by milliseconds; across statements each
-- read judges staleness anew, which is what matters.
-- +goose StatementBegin
CREATE FUNCTION upcheck_stale(last_success_at timestamptz, expires_at timestamptz)
RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT last_success_at IS NULL
        OR last_success_at < clock_timestamp() - interval '48 hours'
        OR coalesce(expires_at <= clock_timestamp(), false)
$$;
-- +goose StatementEnd

-- Failing: the last fetch of the source did not give a usable document.
-- +goose StatementBegin
CREATE FUNCTION upcheck_failing(last_error text)
RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT last_error IS NOT NULL
$$;
-- +goose StatementEnd

-- The advisories of a result that no admin dismissed, in document order
-- (for display; the flags compare advisory_ids with the dismissals).
-- +goose StatementBegin
CREATE FUNCTION upcheck_open_advisories(component_code text, advisories jsonb)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN advisories IS NULL OR jsonb_array_length(advisories) = 0 THEN '[]'::jsonb ELSE (
        SELECT coalesce(jsonb_agg(a ORDER BY n), '[]'::jsonb)
        FROM jsonb_array_elements(advisories) WITH ORDINALITY AS x(a, n)
        WHERE NOT EXISTS (SELECT 1 FROM advisory_dismissals d
                          WHERE d.component_code = upcheck_open_advisories.component_code
                            AND d.advisory_id = x.a->>'id'))
    END
$$;
-- +goose StatementEnd

-- Every source in use, stored or not yet.
CREATE VIEW source_state AS
SELECT u.url,
       u.components,
       s.last_success_at,
       s.last_attempt_at,
       s.last_error,
       s.last_error_at,
       coalesce(s.consecutive_failures, 0)                AS consecutive_failures,
       s.expires_at,
       coalesce(s.signature_state, 'unsigned')            AS signature_state,
       (s.document IS NOT NULL)::boolean                  AS has_document,
       upcheck_stale(s.last_success_at, s.expires_at)     AS stale,
       upcheck_failing(s.last_error)                      AS failing,
       coalesce(s.expires_at <= clock_timestamp(), false)::boolean AS expired
FROM (SELECT source_url AS url, count(*) AS components
      FROM components WHERE source_url IS NOT NULL GROUP BY source_url) u
LEFT JOIN sources s ON s.url = u.url;

-- Every installed component with its current result (null columns when it
-- has none) and every derived flag. The summary, the catalog, the detail
-- page, source health and /metrics read this view and nothing else.
-- No CTE: a view with one is not merged into the query that reads it, and
-- would compute every column of every row whatever the query needs.
CREATE VIEW component_state AS
SELECT c.code,
       c.name,
       c.installed_version,
       c.source_url,
       c.pinned_key,
       (r.code IS NOT NULL)::boolean                        AS evaluated,
       r.latest_version,
       r.update_version,
       r.required_core,
       r.release_url,
       r.evaluation,
       r.eval_error,
       r.evaluated_at,
       coalesce(r.update_available, false)                  AS update_available,
       coalesce(r.security, false)                          AS security,
       coalesce(r.needs_newer_core, false)                  AS needs_newer_core,
       upcheck_open_advisories(c.code, r.advisories)        AS open_advisories,
       coalesce(NOT (r.advisory_ids <@ coalesce(d.ids, '{}')), false)::boolean AS vulnerable,
       coalesce(NOT (r.no_fix_ids <@ coalesce(d.ids, '{}')), false)::boolean   AS vulnerable_no_fix,
       s.last_success_at,
       s.last_attempt_at,
       s.last_error,
       s.expires_at,
       coalesce(c.source_url IS NOT NULL
                AND upcheck_stale(s.last_success_at, s.expires_at), false)::boolean AS stale,
       upcheck_failing(s.last_error)                        AS source_failing,
       -- The component's check fails: its source, or its evaluation.
       coalesce(upcheck_failing(s.last_error) OR r.eval_error IS NOT NULL, false)::boolean AS failing
FROM components c
LEFT JOIN sources s ON s.url = c.source_url
LEFT JOIN component_results r
       ON r.code = c.code
      AND r.installed_version = c.installed_version
      AND r.source_url = c.source_url
      AND r.document_hash = s.document_hash
      AND (c.code = 'core' OR r.core_version = (SELECT k.installed_version FROM components k WHERE k.code = 'core'))
      AND (c.pinned_key IS NULL OR r.verified_key = c.pinned_key)
LEFT JOIN (SELECT component_code, array_agg(advisory_id) AS ids
           FROM advisory_dismissals GROUP BY component_code) d
       ON d.component_code = c.code;

-- +goose Down
DROP VIEW component_state;
DROP VIEW source_state;
DROP FUNCTION upcheck_open_advisories(text, jsonb);
DROP FUNCTION upcheck_failing(text);
DROP FUNCTION upcheck_stale(timestamptz, timestamptz);
DROP TABLE source_sequences;
ALTER TABLE sources DROP COLUMN unused_since, DROP COLUMN document_hash;
TRUNCATE component_results;
ALTER TABLE component_results
    DROP COLUMN eval_error, DROP COLUMN verified_key, DROP COLUMN document_hash, DROP COLUMN core_version,
    ADD COLUMN vulnerable boolean NOT NULL DEFAULT false,
    ADD COLUMN stale boolean NOT NULL DEFAULT false,
    ADD COLUMN last_success_at timestamptz,
    ADD COLUMN last_error text,
    ADD COLUMN last_error_at timestamptz;
