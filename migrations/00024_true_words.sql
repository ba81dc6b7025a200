-- +goose Up
-- True words (issue 21, items 8, 10 and 11).
--
-- Stale, once: a component's source is stale when 48 hours
-- (upcheck_stale_age) have passed without a successful read since the
-- component was installed (components.created_at, its first appearance in
-- the table) or since the source last succeeded, or when the stored
-- document's own expiry has passed. A component added a minute ago whose
-- source failed was never read successfully, and is not stale. An offline
-- source (never fetched, imported) is not stale by age once a document
-- was imported: only its document's expiry makes it stale then. A source
-- is installed when the first component that uses it was.
--
-- This one function replaces the two of 00005/00019 and 00017; both views
-- call it, and upcheck_read_model_turns_at knows the instant it turns.
-- STABLE although it reads clock_timestamp(), as 00005 explains.
-- +goose StatementBegin
CREATE FUNCTION upcheck_stale(url text, installed_at timestamptz, last_success_at timestamptz, expires_at timestamptz)
RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(expires_at <= clock_timestamp(), false)
        OR CASE WHEN starts_with(url, 'offline:') AND last_success_at IS NOT NULL THEN false
                ELSE coalesce(coalesce(last_success_at, installed_at) < clock_timestamp() - upcheck_stale_age(), false) END
$$;
-- +goose StatementEnd

-- As in 00017, column for column, staleness judged from the installation
-- too, and one column more: unsigned, no key is pinned for the source (the
-- summary's unsigned_sources), the one definition of it.
CREATE OR REPLACE VIEW source_state AS
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
       upcheck_stale(u.url, u.installed_at, s.last_success_at, s.expires_at) AS stale,
       upcheck_failing(s.last_error)                      AS failing,
       coalesce(s.expires_at <= clock_timestamp(), false)::boolean AS expired,
       u.pin,
       tk.trusted                                         AS trusted_keys,
       (CASE WHEN tk.trusted IS NULL THEN 0
             WHEN position(' of ' IN tk.trusted) > 0
             THEN cardinality(string_to_array(split_part(tk.trusted, ' of ', 2), ' '))
             ELSE 1 END)::integer                         AS trusted_count,
       (CASE WHEN t.pin = u.pin THEN t.version ELSE 0 END)::bigint AS key_version,
       s.sequence,
       coalesce(s.verified_by, '')::text                  AS verified_by,
       (coalesce(s.document IS NOT NULL AND s.expires_at < clock_timestamp() + interval '7 days', false)
        OR (upcheck_failing(s.last_error)
            AND coalesce(s.last_error_kind IN ('unsigned', 'bad_signature', 'key_statement', 'rollback'), false)))::boolean
                                                          AS untrusted,
       starts_with(u.url, 'offline:')                     AS offline,
       (u.pin IS NULL)::boolean                           AS unsigned
FROM (SELECT source_url AS url, count(*) AS components, max(pinned_key) AS pin, min(created_at) AS installed_at
      FROM components WHERE source_url IS NOT NULL GROUP BY source_url) u
LEFT JOIN sources s ON s.url = u.url
LEFT JOIN source_trust t ON t.url = u.url
LEFT JOIN LATERAL (SELECT CASE WHEN t.pin = u.pin AND t.keys IS NOT NULL THEN t.keys ELSE u.pin END AS trusted) tk ON true;

-- As in 00017, column for column; stale reads the installation.
CREATE OR REPLACE VIEW component_state AS
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
                AND upcheck_stale(c.source_url, c.created_at, s.last_success_at, s.expires_at), false)::boolean AS stale,
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
LEFT JOIN (SELECT component_code, array_agg(advisory_id)::text[] AS ids
           FROM advisory_dismissals_in_force GROUP BY component_code) d
       ON d.component_code = c.code;

DROP FUNCTION upcheck_stale(url text, last_success_at timestamptz, expires_at timestamptz);
DROP FUNCTION upcheck_stale(last_success_at timestamptz, expires_at timestamptz);

-- As in 00019, with the instant a component never read successfully turns
-- stale: 48 hours after it was installed (a source's instant is its first
-- component's).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION upcheck_read_model_turns_at()
RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT min(t.at)
    FROM (SELECT coalesce(s.last_success_at, c.created_at) + upcheck_stale_age() AS at
            FROM components c LEFT JOIN sources s ON s.url = c.source_url
           WHERE c.source_url IS NOT NULL
          UNION ALL
          SELECT s.expires_at
            FROM sources s WHERE s.url IN (SELECT c.source_url FROM components c)
          UNION ALL
          SELECT d.expires_at
            FROM advisory_dismissals d WHERE d.ended_at IS NULL) t
    WHERE t.at > clock_timestamp()
$$;
-- +goose StatementEnd

-- Of the sources a run did not finish (sources_skipped), those that were
-- fetched but whose outcome was not written because the check stopped
-- first; the others were never started. Runs recorded before count none.
ALTER TABLE check_runs ADD COLUMN sources_unwritten integer NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE check_runs DROP COLUMN sources_unwritten;

-- +goose StatementBegin
CREATE FUNCTION upcheck_stale(last_success_at timestamptz, expires_at timestamptz)
RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT last_success_at IS NULL
        OR last_success_at < clock_timestamp() - upcheck_stale_age()
        OR coalesce(expires_at <= clock_timestamp(), false)
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION upcheck_stale(url text, last_success_at timestamptz, expires_at timestamptz)
RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN starts_with(url, 'offline:')
                THEN last_success_at IS NULL OR coalesce(expires_at <= clock_timestamp(), false)
                ELSE upcheck_stale(last_success_at, expires_at) END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION upcheck_read_model_turns_at()
RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT min(t.at)
    FROM (SELECT s.last_success_at + upcheck_stale_age() AS at
            FROM sources s WHERE s.url IN (SELECT c.source_url FROM components c)
          UNION ALL
          SELECT s.expires_at
            FROM sources s WHERE s.url IN (SELECT c.source_url FROM components c)
          UNION ALL
          SELECT d.expires_at
            FROM advisory_dismissals d WHERE d.ended_at IS NULL) t
    WHERE t.at > clock_timestamp()
$$;
-- +goose StatementEnd

DROP VIEW source_state;
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
       upcheck_stale(u.url, s.last_success_at, s.expires_at) AS stale,
       upcheck_failing(s.last_error)                      AS failing,
       coalesce(s.expires_at <= clock_timestamp(), false)::boolean AS expired,
       u.pin,
       tk.trusted                                         AS trusted_keys,
       (CASE WHEN tk.trusted IS NULL THEN 0
             WHEN position(' of ' IN tk.trusted) > 0
             THEN cardinality(string_to_array(split_part(tk.trusted, ' of ', 2), ' '))
             ELSE 1 END)::integer                         AS trusted_count,
       (CASE WHEN t.pin = u.pin THEN t.version ELSE 0 END)::bigint AS key_version,
       s.sequence,
       coalesce(s.verified_by, '')::text                  AS verified_by,
       (coalesce(s.document IS NOT NULL AND s.expires_at < clock_timestamp() + interval '7 days', false)
        OR (upcheck_failing(s.last_error)
            AND coalesce(s.last_error_kind IN ('unsigned', 'bad_signature', 'key_statement', 'rollback'), false)))::boolean
                                                          AS untrusted,
       starts_with(u.url, 'offline:')                     AS offline
FROM (SELECT source_url AS url, count(*) AS components, max(pinned_key) AS pin
      FROM components WHERE source_url IS NOT NULL GROUP BY source_url) u
LEFT JOIN sources s ON s.url = u.url
LEFT JOIN source_trust t ON t.url = u.url
LEFT JOIN LATERAL (SELECT CASE WHEN t.pin = u.pin AND t.keys IS NOT NULL THEN t.keys ELSE u.pin END AS trusted) tk ON true;

CREATE OR REPLACE VIEW component_state AS
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
                AND upcheck_stale(c.source_url, s.last_success_at, s.expires_at), false)::boolean AS stale,
       upcheck_failing(s.last_error)                        AS source_failing,
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
LEFT JOIN (SELECT component_code, array_agg(advisory_id)::text[] AS ids
           FROM advisory_dismissals_in_force GROUP BY component_code) d
       ON d.component_code = c.code;

DROP FUNCTION upcheck_stale(url text, installed_at timestamptz, last_success_at timestamptz, expires_at timestamptz);
