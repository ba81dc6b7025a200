-- +goose Up
-- One read model: every derived flag defined once, in SQL, and judged on
-- the database clock when read. The summary, the catalog, the detail page,
-- source health and /metrics read these views and nothing else.

-- The age after which a source without a successful read is stale: one
-- definition, read by upcheck_stale and by the instant it turns.
-- +goose StatementBegin
CREATE FUNCTION upcheck_stale_age()
RETURNS interval
LANGUAGE sql IMMUTABLE AS $$
    SELECT interval '48 hours'
$$;
-- +goose StatementEnd

-- How close a stored document's own expiry makes its source's trust need
-- a look (readmodel.ExpiryWarning): source_state.untrusted and Source
-- health's expires_soon.
-- +goose StatementBegin
CREATE FUNCTION upcheck_expiry_warning()
RETURNS interval
LANGUAGE sql IMMUTABLE AS $$
    SELECT interval '7 days'
$$;
-- +goose StatementEnd

-- How long the warning of a manifest sync that lowered a source's trust
-- shows (pin_downgrades), while the lowered pin stands.
-- +goose StatementBegin
CREATE FUNCTION upcheck_pin_downgrade_shown()
RETURNS interval
LANGUAGE sql IMMUTABLE AS $$
    SELECT interval '14 days'
$$;
-- +goose StatementEnd

-- Stale: a component's source is stale when the stale age has passed
-- without a successful read since the component was installed
-- (components.created_at, its first appearance in the table) or since the
-- source last succeeded, or when the stored document's own expiry has
-- passed. A component added a minute ago whose source failed was never read
-- successfully, and is not stale. An offline source ("offline:NAME",
-- updatedoc.OfflinePrefix: never fetched, its documents arrive by import
-- only) is not stale by age once a document was imported: only its
-- document's expiry makes it stale then. A source is installed when the
-- first component that uses it was. Both views call this one function, and
-- upcheck_read_model_turns_at knows the instant it turns.
-- Declared STABLE although clock_timestamp() moves within a statement: a
-- view whose columns call a VOLATILE function is not merged into the query
-- that reads it, and every column of every row would be computed. Within
-- one statement the clock moves by milliseconds; across statements each
-- read judges staleness anew, which is what matters.
-- +goose StatementBegin
CREATE FUNCTION upcheck_stale(url text, installed_at timestamptz, last_success_at timestamptz, expires_at timestamptz)
RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(expires_at <= clock_timestamp(), false)
        OR CASE WHEN starts_with(url, 'offline:') AND last_success_at IS NOT NULL THEN false
                ELSE coalesce(coalesce(last_success_at, installed_at) < clock_timestamp() - upcheck_stale_age(), false) END
$$;
-- +goose StatementEnd

-- The kind of a source, told by its address (readmodel.SourceKindOf, its
-- Go twin): offline ("offline:NAME"), npm ("npm:NAME") or document.
-- +goose StatementBegin
CREATE FUNCTION upcheck_source_kind(url text)
RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN url IS NULL THEN NULL
                WHEN starts_with(url, 'offline:') THEN 'offline'
                WHEN starts_with(url, 'npm:') THEN 'npm'
                ELSE 'document' END
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

-- The advisories of a result without a dismissal in force, in document
-- order (for display; the flags compare advisory_ids with the dismissals).
-- +goose StatementBegin
CREATE FUNCTION upcheck_open_advisories(component_code text, advisories jsonb)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN advisories IS NULL OR jsonb_array_length(advisories) = 0 THEN '[]'::jsonb ELSE (
        SELECT coalesce(jsonb_agg(a ORDER BY n), '[]'::jsonb)
        FROM jsonb_array_elements(advisories) WITH ORDINALITY AS x(a, n)
        WHERE NOT EXISTS (SELECT 1 FROM advisory_dismissals d
                          WHERE d.component_code = upcheck_open_advisories.component_code
                            AND d.ended_at IS NULL
                            AND upcheck_dismissal_in_force(d, x.a)))
    END
$$;
-- +goose StatementEnd

-- The order of severities, for "most urgent first": an unknown or missing
-- severity comes last.
-- +goose StatementBegin
CREATE FUNCTION upcheck_severity_rank(severity text)
RETURNS integer
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE lower(severity)
        WHEN 'critical' THEN 4
        WHEN 'high'     THEN 3
        WHEN 'medium'   THEN 2
        WHEN 'moderate' THEN 2
        WHEN 'low'      THEN 1
        ELSE 0
    END
$$;
-- +goose StatementEnd

-- The catalog's order, in one place: what needs action first (a package
-- known to be malicious, then an advisory known to be exploited, then a
-- security update or a vulnerable version), then an update, then a check
-- that fails, is stale or has not evaluated the component yet, then up to
-- date, then components without an update source. Its arguments are
-- component_state's flags; the page and its keyset cursor (after) both
-- read this rank, then lower(name), then code.
-- +goose StatementBegin
CREATE FUNCTION upcheck_catalog_rank(malicious boolean, known_exploited boolean, security boolean,
                                     vulnerable boolean, update_available boolean,
                                     source_url text, failing boolean, stale boolean, evaluated boolean)
RETURNS integer
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN malicious THEN 0
                WHEN known_exploited THEN 1
                WHEN security OR vulnerable THEN 2
                WHEN update_available THEN 3
                WHEN source_url IS NULL THEN 6
                WHEN failing OR stale OR NOT evaluated THEN 4
                ELSE 5 END
$$;
-- +goose StatementEnd

-- The rank of a signal of what an offered npm update brings, lower more
-- pressing: a new install script, an exotic source, a lower trust or a
-- provenance naming another repository, a young dependency, a burst; an
-- unknown kind last. The SQL twin of
-- readmodel.SignalRank (TestSignalRankMatchesSQL), read by the summary's
-- ranking of what needs attention.
-- +goose StatementBegin
CREATE FUNCTION upcheck_signal_rank(kind text)
RETURNS integer
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE kind WHEN 'install_script' THEN 0 WHEN 'exotic_source' THEN 1 WHEN 'trust_lower' THEN 2
                     WHEN 'provenance_repository' THEN 2 WHEN 'young_dependency' THEN 3 WHEN 'burst' THEN 4 ELSE 5 END
$$;
-- +goose StatementEnd

-- What needs attention, in one place: a security problem (a package known
-- to be malicious, an advisory known to be exploited, a security update,
-- an open advisory affecting the installed version), a trust downgrade (the
-- version to install lost the provenance of the installed one, or was
-- published by an account new to the package, or a manifest sync lowered
-- the source's pin), an offered update that brings a signal (brings: the
-- offered update's registry_facts.brings, null when none is offered) or a
-- deprecated installed version. Its arguments are component_state's
-- columns. The summary counts and names these components
-- (attention_total, attention: the banner, the dashboard and the
-- navigation badge) and the catalog's attention filter lists them (page
-- and API), so the banner's count is the filter's total.
-- +goose StatementBegin
CREATE FUNCTION upcheck_needs_attention(malicious boolean, known_exploited boolean, security boolean, vulnerable boolean,
                                        provenance_lost text, new_publisher_version text, pin_downgrade text,
                                        deprecated text, brings jsonb)
RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(malicious OR known_exploited OR security OR vulnerable
                    OR provenance_lost IS NOT NULL OR new_publisher_version IS NOT NULL
                    OR pin_downgrade IS NOT NULL OR deprecated IS NOT NULL
                    OR (jsonb_typeof(brings) = 'array' AND jsonb_array_length(brings) > 0), false)
$$;
-- +goose StatementEnd

-- Every source in use, stored or not yet, with its trust: `untrusted` is
-- the one definition of a source whose trust needs a look (the summary's
-- untrusted_sources): its document expires within the expiry warning
-- (upcheck_expiry_warning, 7 days) or has expired,
-- or its last fetch was refused for its signature, its key statement or a
-- rollback; `unsigned`: nothing proves who wrote its documents (the
-- summary's unsigned_sources): no key is pinned for a document source,
-- or, for an npm source read once, its registry published no signing keys
-- (no key verified its stored package); `offline`: the source is never fetched.
-- The sources the installed components use: each with how many use it,
-- their pin and when the first was installed (00025 keeps it to the site
-- upcheck runs beside, whose sources the Sources page and the summary
-- say).
CREATE VIEW source_users AS
SELECT source_url AS url, count(*) AS components, max(pinned_key) AS pin, min(created_at) AS installed_at
FROM components WHERE source_url IS NOT NULL GROUP BY source_url;

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
       (coalesce(s.document IS NOT NULL AND s.expires_at < clock_timestamp() + upcheck_expiry_warning(), false)
        OR (upcheck_failing(s.last_error)
            AND coalesce(s.last_error_kind IN ('unsigned', 'bad_signature', 'key_statement', 'rollback'), false)))::boolean
                                                          AS untrusted,
       starts_with(u.url, 'offline:')                     AS offline,
       (CASE WHEN upcheck_source_kind(u.url) = 'npm'
             THEN coalesce(s.document IS NOT NULL AND s.signature_state <> 'verified', false)
             ELSE u.pin IS NULL END)::boolean             AS unsigned,
       upcheck_source_kind(u.url)                         AS kind,
       s.registry,
       rk.key_ids                                         AS registry_keys,
       rk.changed_at                                      AS keys_changed_at
FROM source_users u
LEFT JOIN sources s ON s.url = u.url
LEFT JOIN source_trust t ON t.url = u.url
LEFT JOIN registry_keys rk ON rk.registry = s.registry
LEFT JOIN LATERAL (SELECT CASE WHEN t.pin = u.pin AND t.keys IS NOT NULL THEN t.keys ELSE u.pin END AS trusted) tk ON true;

-- Every installed component with its current result (null columns when it
-- has none) and every derived flag. The dismissals it subtracts (d) are the
-- ones in force.
-- No CTE: a view with one is not merged into the query that reads it, and
-- would compute every column of every row whatever the query needs.
CREATE VIEW component_state AS
SELECT c.code,
       c.name,
       c.installed_version,
       c.source_url,
       upcheck_source_kind(c.source_url)                    AS source_kind,
       c.package,
       c.pinned_key,
       (r.code IS NOT NULL)::boolean                        AS evaluated,
       r.latest_version,
       r.update_version,
       r.required_core,
       r.release_url,
       r.evaluation,
       r.eval_error,
       r.evaluated_at,
       r.deprecated,
       r.provenance_lost,
       r.registry_facts,
       -- The policy (docs/policy.md): what it holds back, the skip in
       -- force when it hid a release, a version published by an account
       -- new to the package, a manifest sync that lowered the source's
       -- trust while its lowered pin stands (upcheck_pin_downgrade_shown).
       c.policy,
       r.waiting_version,
       r.waiting_until,
       r.held_version,
       r.held_reason,
       (r.evaluation->>'skipped')::text                     AS skipped_version,
       r.new_publisher_version,
       r.new_publisher,
       r.fix_version,
       pd.reason                                            AS pin_downgrade,
       pd.changed_at                                        AS pin_downgraded_at,
       coalesce(r.update_available, false)                  AS update_available,
       -- A security update: a release its publisher marks, or one that
       -- clears an open advisory (docs/policy.md); a dismissed advisory
       -- makes none.
       coalesce(r.security OR NOT (r.fix_ids <@ coalesce(d.ids, '{}')), false)::boolean AS security,
       coalesce(r.needs_newer_core, false)                  AS needs_newer_core,
       upcheck_open_advisories(c.code, r.advisories)        AS open_advisories,
       coalesce(NOT (r.advisory_ids <@ coalesce(d.ids, '{}')), false)::boolean AS vulnerable,
       coalesce(NOT (r.no_fix_ids <@ coalesce(d.ids, '{}')), false)::boolean   AS vulnerable_no_fix,
       -- An open advisory is known exploited (KEV), or says the package is
       -- malicious (docs/feeds.md).
       coalesce(NOT (r.exploited_ids <@ coalesce(d.ids, '{}')), false)::boolean AS known_exploited,
       coalesce(NOT (r.malicious_ids <@ coalesce(d.ids, '{}')), false)::boolean AS malicious,
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
      AND r.policy IS NOT DISTINCT FROM c.policy
      AND r.skipped_version IS NOT DISTINCT FROM (SELECT k.version FROM component_skips k WHERE k.code = c.code)
LEFT JOIN pin_downgrades pd
       ON pd.code = c.code
      AND pd.pin = coalesce(c.pinned_key, '')
      AND pd.changed_at > clock_timestamp() - upcheck_pin_downgrade_shown()
LEFT JOIN (SELECT component_code, array_agg(advisory_id)::text[] AS ids
           FROM advisory_dismissals_in_force GROUP BY component_code) d
       ON d.component_code = c.code;

-- The exposure of each component with a security problem now: since when
-- the oldest of its problems that count has been known. Only components
-- with a current evaluation (component_state.evaluated) have a row; then
-- security_problems holds exactly the problems of that result (the result
-- write keeps them in step). A security release counts while
-- component_state says security; an advisory while it is among
-- component_state's open advisories (dismissals as component_state
-- applies them). That list is JSON built per component, so it is only
-- consulted for a component with a standing dismissal: without one, every
-- advisory of the result is open whenever component_state says vulnerable.
-- The summary, the catalog, the detail page and /metrics read this view.
-- It reads component_state's columns only, and is built on it: replacing
-- component_state means dropping and creating this view again.
CREATE VIEW component_exposure AS
SELECT p.code,
       min(p.first_seen_at) AS security_since
FROM security_problems p
JOIN component_state cs ON cs.code = p.code
WHERE cs.evaluated
  AND CASE p.kind
          WHEN 'release' THEN cs.security
          ELSE cs.vulnerable
               AND (p.code NOT IN (SELECT d.component_code FROM advisory_dismissals d WHERE d.ended_at IS NULL)
                    OR cs.open_advisories @> jsonb_build_array(jsonb_build_object('id', p.problem)))
      END
GROUP BY p.code;

-- When may a copy of the read model be reused? (docs/performance.md)
--
-- An instance keeps a snapshot of the catalog in memory. It may reuse it
-- while two things hold: no committed write touched a table the read model
-- reads, and the clock has not passed an instant at which a derived flag
-- turns by itself (a source going stale, a document or a dismissal
-- expiring). The first is read_model_version, bumped by a statement trigger
-- on each such table in the writing transaction, so that a reader sees the
-- bump exactly when it sees the write. The second is
-- upcheck_read_model_turns_at(). A snapshot read in one statement with
-- both is exact; checking them again later costs one row.
CREATE TABLE read_model_version (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    version  bigint  NOT NULL
);
INSERT INTO read_model_version (version) VALUES (0);

-- +goose StatementBegin
CREATE FUNCTION upcheck_read_model_changed()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- Once per transaction: a result write runs a statement per result,
    -- and updating one row again and again in one transaction costs more
    -- each time (every update adds a version the next one walks past). The
    -- flag is transaction-local, so it is gone at commit or rollback.
    IF current_setting('upcheck.read_model_changed', true) = 'on' THEN
        RETURN NULL;
    END IF;
    PERFORM set_config('upcheck.read_model_changed', 'on', true);
    -- Fenced writes already hold the lease's row, so writers of results
    -- queue here in the order they queue there.
    UPDATE read_model_version SET version = version + 1;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON components
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();
CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON sources
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();
CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON component_results
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();
CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON advisory_dismissals
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();
CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON security_problems
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();
CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON registry_keys
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();
CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON component_skips
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();
CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON pin_downgrades
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();

-- The next instant at which the clock alone may change something the
-- read model derives: a component in use reaching the stale age since its
-- source's last success (or, never read, since it was installed), a
-- source's document expiring (upcheck_stale, for fetched and offline
-- sources alike), or a standing dismissal's expiry
-- (upcheck_dismissal_in_force); null: none is due. Every threshold of the
-- read model is a candidate, and only future ones count: an instant that
-- changes nothing (an offline source is not stale by age) only costs a
-- needless read, one that is missing would keep a snapshot that is no
-- longer true.
-- +goose StatementBegin
CREATE FUNCTION upcheck_read_model_turns_at()
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
            FROM advisory_dismissals d WHERE d.ended_at IS NULL
          UNION ALL
          SELECT p.changed_at + upcheck_pin_downgrade_shown()
            FROM pin_downgrades p) t
    WHERE t.at > clock_timestamp()
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION upcheck_read_model_turns_at();
DROP TRIGGER read_model_changed ON pin_downgrades;
DROP TRIGGER read_model_changed ON component_skips;
DROP TRIGGER read_model_changed ON registry_keys;
DROP TRIGGER read_model_changed ON security_problems;
DROP TRIGGER read_model_changed ON advisory_dismissals;
DROP TRIGGER read_model_changed ON component_results;
DROP TRIGGER read_model_changed ON sources;
DROP TRIGGER read_model_changed ON components;
DROP FUNCTION upcheck_read_model_changed();
DROP TABLE read_model_version;
DROP VIEW component_exposure;
DROP VIEW component_state;
DROP VIEW source_state;
DROP VIEW source_users;
DROP FUNCTION upcheck_catalog_rank(boolean, boolean, boolean, boolean, boolean, text, boolean, boolean, boolean);
DROP FUNCTION upcheck_needs_attention(boolean, boolean, boolean, boolean, text, text, text, text, jsonb);
DROP FUNCTION upcheck_signal_rank(text);
DROP FUNCTION upcheck_severity_rank(text);
DROP FUNCTION upcheck_open_advisories(text, jsonb);
DROP FUNCTION upcheck_failing(text);
DROP FUNCTION upcheck_source_kind(text);
DROP FUNCTION upcheck_stale(text, timestamptz, timestamptz, timestamptz);
DROP FUNCTION upcheck_stale_age();
DROP FUNCTION upcheck_pin_downgrade_shown();
DROP FUNCTION upcheck_expiry_warning();
