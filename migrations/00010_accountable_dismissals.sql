-- +goose Up
-- Accountable risk acceptance.
--
-- A dismissal says who accepted which advisory of which component, when,
-- why (a required reason), until when (an optional expiry) and what the
-- advisory said at that moment (its fingerprint: severity, affected range,
-- fixed-in version). The table becomes the history of those decisions: a
-- new dismissal of the same advisory ends the one before it ("replaced"),
-- restoring an advisory ends it ("undone"), and an ended row is kept.
--
-- A dismissal is *in force* (upcheck_dismissal_in_force, the one
-- definition) while it has not ended, its expiry has not passed (judged
-- with clock_timestamp() when read, like upcheck_stale), and the advisory
-- as the current result lists it still has the fingerprint that was
-- dismissed. Any change of severity, affected range or fixed-in version,
-- in either direction, makes the advisory count again: what was accepted
-- is no longer what is published. Nothing is written when a dismissal
-- expires or its advisory changes; the read model judges it when it reads.

ALTER TABLE advisory_dismissals DROP CONSTRAINT advisory_dismissals_pkey;
ALTER TABLE advisory_dismissals
    ADD COLUMN id         bigserial PRIMARY KEY,
    -- Who, as they were called when they dismissed: the user row may go.
    ADD COLUMN user_email text,
    ADD COLUMN reason     text,
    -- null: until someone restores the advisory or it changes.
    ADD COLUMN expires_at timestamptz,
    -- The advisory as it was dismissed; '' for a member it did not have.
    ADD COLUMN severity   text NOT NULL DEFAULT '',
    ADD COLUMN affected   text NOT NULL DEFAULT '',
    ADD COLUMN fixed_in   text NOT NULL DEFAULT '',
    -- When and how the decision ended; null while it stands (expired or
    -- not: an expiry is judged when read).
    ADD COLUMN ended_at   timestamptz,
    ADD COLUMN ended_how  text CHECK (ended_how IN ('undone', 'replaced', 'migrated'));

-- Dismissals made before reasons and fingerprints were recorded keep
-- counting only when their advisory can still be read from a stored
-- result; the rest end now ("migrated"): what was accepted is unknown.
UPDATE advisory_dismissals d
SET user_email = u.email
FROM users u
WHERE u.id = d.user_id;
UPDATE advisory_dismissals
SET reason = 'No reason recorded: dismissed before upcheck asked for one.';
UPDATE advisory_dismissals d
SET severity = coalesce(a->>'severity', ''),
    affected = coalesce(a->>'affected', ''),
    fixed_in = coalesce(a->>'fixed_in', '')
FROM component_results r
CROSS JOIN LATERAL jsonb_array_elements(r.advisories) a
WHERE r.code = d.component_code AND a->>'id' = d.advisory_id;
UPDATE advisory_dismissals d
SET ended_at = clock_timestamp(), ended_how = 'migrated'
WHERE NOT EXISTS (SELECT 1 FROM component_results r
                  CROSS JOIN LATERAL jsonb_array_elements(r.advisories) a
                  WHERE r.code = d.component_code AND a->>'id' = d.advisory_id);

ALTER TABLE advisory_dismissals
    ALTER COLUMN reason SET NOT NULL,
    ADD CONSTRAINT advisory_dismissals_reason CHECK (btrim(reason, E' \t\r\n') <> ''),
    ADD CONSTRAINT advisory_dismissals_reason_length CHECK (char_length(reason) <= 500),
    -- "In the future when set": judged against the moment of dismissal,
    -- which the insert takes from clock_timestamp().
    ADD CONSTRAINT advisory_dismissals_expiry CHECK (expires_at IS NULL OR expires_at > dismissed_at),
    ADD CONSTRAINT advisory_dismissals_ended CHECK ((ended_at IS NULL) = (ended_how IS NULL));

-- At most one standing decision per component and advisory.
CREATE UNIQUE INDEX advisory_dismissals_standing
    ON advisory_dismissals (component_code, advisory_id) WHERE ended_at IS NULL;
-- The audit log lists expiries by time.
CREATE INDEX advisory_dismissals_expires_at
    ON advisory_dismissals (expires_at) WHERE expires_at IS NOT NULL;

-- The one definition of a dismissal in force, for one advisory as a
-- current result lists it (an element of component_results.advisories).
-- STABLE although it reads clock_timestamp(), as upcheck_stale and for the
-- same reason.
-- +goose StatementBegin
CREATE FUNCTION upcheck_dismissal_in_force(d advisory_dismissals, advisory jsonb)
RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT d.ended_at IS NULL
       AND d.advisory_id = advisory->>'id'
       AND (d.expires_at IS NULL OR d.expires_at > clock_timestamp())
       AND d.severity = coalesce(advisory->>'severity', '')
       AND d.affected = coalesce(advisory->>'affected', '')
       AND d.fixed_in = coalesce(advisory->>'fixed_in', '')
$$;
-- +goose StatementEnd

-- The dismissals in force, against each component's stored result (the
-- read model keeps only current results, so a stale row here changes
-- nothing it shows).
CREATE VIEW advisory_dismissals_in_force AS
SELECT d.id, d.component_code, d.advisory_id
FROM advisory_dismissals d
JOIN component_results r ON r.code = d.component_code
CROSS JOIN LATERAL jsonb_array_elements(r.advisories) a
WHERE d.ended_at IS NULL
  AND a->>'id' = d.advisory_id
  AND upcheck_dismissal_in_force(d, a);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION upcheck_open_advisories(component_code text, advisories jsonb)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN advisories IS NULL OR jsonb_array_length(advisories) = 0 THEN '[]'::jsonb ELSE (
        SELECT coalesce(jsonb_agg(a ORDER BY n), '[]'::jsonb)
        FROM jsonb_array_elements(advisories) WITH ORDINALITY AS x(a, n)
        WHERE NOT EXISTS (SELECT 1 FROM advisory_dismissals d
                          WHERE d.component_code = upcheck_open_advisories.component_code
                            AND d.advisory_id = x.a->>'id'
                            AND d.ended_at IS NULL
                            AND upcheck_dismissal_in_force(d, x.a)))
    END
$$;
-- +goose StatementEnd

-- As in 00005, column for column; only the dismissals it subtracts (d)
-- are now the ones in force.
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
LEFT JOIN (SELECT component_code, array_agg(advisory_id) AS ids
           FROM advisory_dismissals GROUP BY component_code) d
       ON d.component_code = c.code;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION upcheck_open_advisories(component_code text, advisories jsonb)
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
DROP VIEW advisory_dismissals_in_force;
DROP FUNCTION upcheck_dismissal_in_force(advisory_dismissals, jsonb);
-- Only the standing decisions go back to the old shape.
DELETE FROM advisory_dismissals WHERE ended_at IS NOT NULL;
DROP INDEX advisory_dismissals_expires_at;
DROP INDEX advisory_dismissals_standing;
ALTER TABLE advisory_dismissals
    DROP CONSTRAINT advisory_dismissals_pkey,
    DROP COLUMN id,
    DROP COLUMN user_email,
    DROP COLUMN reason,
    DROP COLUMN expires_at,
    DROP COLUMN severity,
    DROP COLUMN affected,
    DROP COLUMN fixed_in,
    DROP COLUMN ended_at,
    DROP COLUMN ended_how,
    ADD PRIMARY KEY (component_code, advisory_id);
