-- +goose Up
-- Offline sources ("offline:NAME", updatedoc.OfflinePrefix): sources that
-- are never fetched, whose documents arrive by import only (air-gapped
-- sites). Such a source cannot go 48 hours "without a successful fetch":
-- it is stale only when it was never imported or when its document's own
-- expiry has passed. An offline source never imported has no error: it is
-- not failing, it waits for its first import.
--
-- Staleness stays one definition: upcheck_stale(url, …) is what both views
-- read. For a fetched source it is upcheck_stale(last_success_at,
-- expires_at), the rule of 00005 (kept, and read from here, so that a later
-- change of the fetch age reaches it); an offline source is stale only
-- when never imported or past its document's expiry.
-- +goose StatementBegin
CREATE FUNCTION upcheck_stale(url text, last_success_at timestamptz, expires_at timestamptz)
RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN starts_with(url, 'offline:')
                THEN last_success_at IS NULL OR coalesce(expires_at <= clock_timestamp(), false)
                ELSE upcheck_stale(last_success_at, expires_at) END
$$;
-- +goose StatementEnd

-- As in 00016, column for column, with the address given to upcheck_stale
-- and one column more: offline, the source is never fetched.
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

-- As in 00010, column for column; only stale reads the address.
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

-- +goose Down
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
       upcheck_stale(s.last_success_at, s.expires_at)     AS stale,
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
                                                          AS untrusted
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
                AND upcheck_stale(s.last_success_at, s.expires_at), false)::boolean AS stale,
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

DROP FUNCTION upcheck_stale(url text, last_success_at timestamptz, expires_at timestamptz);
