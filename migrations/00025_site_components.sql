-- +goose Up
-- Each site's components (docs/design.md "Many sites"): what a site
-- installs as components (components), what evaluation derived for each
-- (component_results, security_problems) and what the site decided about
-- them (component_skips, component_approvals, pin_downgrades, the
-- dismissals of advisory_dismissals) are kept per site, keyed by the site
-- and the component's code. What is read of a source (sources,
-- source_sequences, source_trust, registry_keys) stays one row for the
-- whole fleet, fetched once however many sites' components use it. The
-- feeds' marks of components (intel_marks, intel_pending) stay keyed by
-- code alone: a mark refuses a result evaluated before a feed change for
-- every site's component of that code, more than needed, never less. The
-- rows written before sites had components are the site upcheck runs
-- beside (sites.id 1).
ALTER TABLE components ADD COLUMN site_id bigint NOT NULL DEFAULT 1 REFERENCES sites (id) ON DELETE CASCADE;
ALTER TABLE components DROP CONSTRAINT components_pkey;
ALTER TABLE components ADD PRIMARY KEY (site_id, code);

ALTER TABLE security_problems DROP CONSTRAINT security_problems_code_fkey;
ALTER TABLE security_problems DROP CONSTRAINT security_problems_pkey;
ALTER TABLE component_results ADD COLUMN site_id bigint NOT NULL DEFAULT 1 REFERENCES sites (id) ON DELETE CASCADE;
ALTER TABLE component_results DROP CONSTRAINT component_results_pkey;
ALTER TABLE component_results ADD PRIMARY KEY (site_id, code);
ALTER TABLE security_problems ADD COLUMN site_id bigint NOT NULL DEFAULT 1;
ALTER TABLE security_problems ADD PRIMARY KEY (site_id, code, kind, problem);
ALTER TABLE security_problems ADD FOREIGN KEY (site_id, code) REFERENCES component_results (site_id, code) ON DELETE CASCADE;

ALTER TABLE component_skips ADD COLUMN site_id bigint NOT NULL DEFAULT 1 REFERENCES sites (id) ON DELETE CASCADE;
ALTER TABLE component_skips DROP CONSTRAINT component_skips_pkey;
ALTER TABLE component_skips ADD PRIMARY KEY (site_id, code);

ALTER TABLE pin_downgrades ADD COLUMN site_id bigint NOT NULL DEFAULT 1 REFERENCES sites (id) ON DELETE CASCADE;
ALTER TABLE pin_downgrades DROP CONSTRAINT pin_downgrades_pkey;
ALTER TABLE pin_downgrades ADD PRIMARY KEY (site_id, code);

ALTER TABLE component_approvals ADD COLUMN site_id bigint NOT NULL DEFAULT 1 REFERENCES sites (id) ON DELETE CASCADE;
ALTER TABLE component_approvals DROP CONSTRAINT component_approvals_pkey;
ALTER TABLE component_approvals ADD PRIMARY KEY (site_id, code, version, digest);

-- A dismissal is its site's (site_id, 00013), a component's and a
-- tree's alike: a tree's covers the advisory in that site's tree alone
-- (upcheck_tree_dismissed).
ALTER TABLE advisory_dismissals ADD FOREIGN KEY (site_id) REFERENCES sites (id) ON DELETE CASCADE;
DROP INDEX advisory_dismissals_standing;
CREATE UNIQUE INDEX advisory_dismissals_standing
    ON advisory_dismissals (site_id, component_code, package, advisory_id) WHERE ended_at IS NULL;

-- The sources of the site upcheck runs beside (00006): the Sources page
-- and the summary say its sources, not another site's.
CREATE OR REPLACE VIEW source_users AS
SELECT source_url AS url, count(*) AS components, max(pinned_key) AS pin, min(created_at) AS installed_at
FROM components WHERE source_url IS NOT NULL AND site_id = 1 GROUP BY source_url;

-- The dismissals in force (00005), each with its component's site.
CREATE OR REPLACE VIEW advisory_dismissals_in_force AS
SELECT d.id, d.component_code, (a->>'id')::text AS advisory_id, d.site_id
FROM advisory_dismissals d
JOIN component_results r ON r.site_id = d.site_id AND r.code = d.component_code
CROSS JOIN LATERAL jsonb_array_elements(r.advisories) a
WHERE d.ended_at IS NULL
  AND upcheck_dismissal_in_force(d, a);

-- upcheck_open_advisories (00006) of one site's component.
-- +goose StatementBegin
CREATE FUNCTION upcheck_open_advisories(site bigint, component_code text, advisories jsonb)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN advisories IS NULL OR jsonb_array_length(advisories) = 0 THEN '[]'::jsonb ELSE (
        SELECT coalesce(jsonb_agg(a ORDER BY n), '[]'::jsonb)
        FROM jsonb_array_elements(advisories) WITH ORDINALITY AS x(a, n)
        WHERE NOT EXISTS (SELECT 1 FROM advisory_dismissals d
                          WHERE d.site_id = site
                            AND d.component_code = upcheck_open_advisories.component_code
                            AND d.ended_at IS NULL
                            AND upcheck_dismissal_in_force(d, x.a)))
    END
$$;
-- +goose StatementEnd

-- upcheck_approvals_of (00018) of one site's component.
-- +goose StatementBegin
CREATE FUNCTION upcheck_approvals_of(site bigint, component text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT coalesce(string_agg(a.version || ' ' || a.digest, E'\n' ORDER BY a.version || ' ' || a.digest COLLATE "C"), '')
    FROM component_approvals a
    WHERE a.site_id = site AND a.code = component
$$;
-- +goose StatementEnd

-- component_state (00006), each site's components with their site's
-- results, skips, pin downgrades and dismissals, and their site's core
-- (site_id, last: a view keeps its columns' order). A registered site's
-- lockfile may name no core: its components are evaluated against none
-- (core_version '').
CREATE OR REPLACE VIEW component_state AS
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
       coalesce(r.security OR NOT (r.fix_ids <@ coalesce(d.ids, '{}')), false)::boolean AS security,
       coalesce(r.needs_newer_core, false)                  AS needs_newer_core,
       upcheck_open_advisories(c.site_id, c.code, r.advisories) AS open_advisories,
       coalesce(NOT (r.advisory_ids <@ coalesce(d.ids, '{}')), false)::boolean AS vulnerable,
       coalesce(NOT (r.no_fix_ids <@ coalesce(d.ids, '{}')), false)::boolean   AS vulnerable_no_fix,
       coalesce(NOT (r.exploited_ids <@ coalesce(d.ids, '{}')), false)::boolean AS known_exploited,
       coalesce(NOT (r.malicious_ids <@ coalesce(d.ids, '{}')), false)::boolean AS malicious,
       s.last_success_at,
       s.last_attempt_at,
       s.last_error,
       s.expires_at,
       coalesce(c.source_url IS NOT NULL
                AND upcheck_stale(c.source_url, c.created_at, s.last_success_at, s.expires_at), false)::boolean AS stale,
       upcheck_failing(s.last_error)                        AS source_failing,
       coalesce(upcheck_failing(s.last_error) OR r.eval_error IS NOT NULL, false)::boolean AS failing,
       c.site_id
FROM components c
LEFT JOIN sources s ON s.url = c.source_url
LEFT JOIN component_results r
       ON r.site_id = c.site_id
      AND r.code = c.code
      AND r.installed_version = c.installed_version
      AND r.source_url = c.source_url
      AND r.document_hash = s.document_hash
      AND (c.code = 'core' OR r.core_version = coalesce((SELECT k.installed_version FROM components k
                                                         WHERE k.site_id = c.site_id AND k.code = 'core'), ''))
      AND (c.pinned_key IS NULL OR r.verified_key = c.pinned_key)
      AND r.policy IS NOT DISTINCT FROM c.policy
      AND r.skipped_version IS NOT DISTINCT FROM (SELECT k.version FROM component_skips k
                                                  WHERE k.site_id = c.site_id AND k.code = c.code)
LEFT JOIN pin_downgrades pd
       ON pd.site_id = c.site_id
      AND pd.code = c.code
      AND pd.pin = coalesce(c.pinned_key, '')
      AND pd.changed_at > clock_timestamp() - upcheck_pin_downgrade_shown()
LEFT JOIN (SELECT site_id, component_code, array_agg(advisory_id)::text[] AS ids
           FROM advisory_dismissals_in_force GROUP BY site_id, component_code) d
       ON d.site_id = c.site_id AND d.component_code = c.code;

-- component_exposure (00006), by site.
CREATE OR REPLACE VIEW component_exposure AS
SELECT p.code,
       min(p.first_seen_at) AS security_since,
       p.site_id
FROM security_problems p
JOIN component_state cs ON cs.site_id = p.site_id AND cs.code = p.code
WHERE cs.evaluated
  AND CASE p.kind
          WHEN 'release' THEN cs.security
          ELSE cs.vulnerable
               AND ((p.site_id, p.code) NOT IN (SELECT d.site_id, d.component_code FROM advisory_dismissals d
                                                 WHERE d.ended_at IS NULL)
                    OR cs.open_advisories @> jsonb_build_array(jsonb_build_object('id', p.problem)))
      END
GROUP BY p.site_id, p.code;

DROP FUNCTION upcheck_open_advisories(text, jsonb);
DROP FUNCTION upcheck_approvals_of(text);

-- upcheck_component_tree_attention (00023): the components are the
-- site's.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION upcheck_component_tree_attention(site bigint, dev_mode text)
RETURNS TABLE (code text, kind text, name text, version text, advisory_id text, malicious boolean, instance_id text)
LANGUAGE sql STABLE AS $$
    SELECT c.code, a.kind, a.name, a.version, a.advisory_id, a.malicious, p.id
    FROM upcheck_tree_attention(site, dev_mode) a
    JOIN tree_packages p ON p.site_id = site AND p.name = a.name AND p.version = a.version
                        AND p.source NOT IN ('link', 'file')
    CROSS JOIN LATERAL unnest(p.components) AS c(code)
    JOIN components k ON k.site_id = site AND k.code = c.code
    WHERE a.kind <> 'exposed'
      AND NOT (p.name IS NOT DISTINCT FROM k.package
               AND EXISTS (SELECT 1 FROM jsonb_array_elements(p.via) AS v(e) WHERE jsonb_array_length(v.e->'path') = 1))
$$;
-- +goose StatementEnd

-- +goose Down
-- The definitions before (00005, 00006, 00018, 00023).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION upcheck_component_tree_attention(site bigint, dev_mode text)
RETURNS TABLE (code text, kind text, name text, version text, advisory_id text, malicious boolean, instance_id text)
LANGUAGE sql STABLE AS $$
    SELECT c.code, a.kind, a.name, a.version, a.advisory_id, a.malicious, p.id
    FROM upcheck_tree_attention(site, dev_mode) a
    JOIN tree_packages p ON p.site_id = site AND p.name = a.name AND p.version = a.version
                        AND p.source NOT IN ('link', 'file')
    CROSS JOIN LATERAL unnest(p.components) AS c(code)
    JOIN components k ON k.code = c.code
    WHERE a.kind <> 'exposed'
      AND NOT (p.name IS NOT DISTINCT FROM k.package
               AND EXISTS (SELECT 1 FROM jsonb_array_elements(p.via) AS v(e) WHERE jsonb_array_length(v.e->'path') = 1))
$$;
-- +goose StatementEnd

CREATE OR REPLACE VIEW source_users AS
SELECT source_url AS url, count(*) AS components, max(pinned_key) AS pin, min(created_at) AS installed_at
FROM components WHERE source_url IS NOT NULL GROUP BY source_url;
DROP VIEW component_exposure;
DROP VIEW component_state;
DROP VIEW advisory_dismissals_in_force;
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
-- +goose StatementBegin
CREATE FUNCTION upcheck_approvals_of(component text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT coalesce(string_agg(a.version || ' ' || a.digest, E'\n' ORDER BY a.version || ' ' || a.digest COLLATE "C"), '')
    FROM component_approvals a
    WHERE a.code = component
$$;
-- +goose StatementEnd

CREATE VIEW advisory_dismissals_in_force AS
SELECT d.id, d.component_code, (a->>'id')::text AS advisory_id
FROM advisory_dismissals d
JOIN component_results r ON r.code = d.component_code
CROSS JOIN LATERAL jsonb_array_elements(r.advisories) a
WHERE d.ended_at IS NULL
  AND upcheck_dismissal_in_force(d, a);

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

DROP FUNCTION upcheck_open_advisories(bigint, text, jsonb);
DROP FUNCTION upcheck_approvals_of(bigint, text);

DELETE FROM advisory_dismissals WHERE site_id <> 1;
DROP INDEX advisory_dismissals_standing;
ALTER TABLE advisory_dismissals DROP CONSTRAINT advisory_dismissals_site_id_fkey;
CREATE UNIQUE INDEX advisory_dismissals_standing
    ON advisory_dismissals (component_code, package, advisory_id) WHERE ended_at IS NULL;
DELETE FROM component_approvals WHERE site_id <> 1;
ALTER TABLE component_approvals DROP CONSTRAINT component_approvals_pkey;
ALTER TABLE component_approvals DROP COLUMN site_id;
ALTER TABLE component_approvals ADD PRIMARY KEY (code, version, digest);
DELETE FROM pin_downgrades WHERE site_id <> 1;
ALTER TABLE pin_downgrades DROP CONSTRAINT pin_downgrades_pkey;
ALTER TABLE pin_downgrades DROP COLUMN site_id;
ALTER TABLE pin_downgrades ADD PRIMARY KEY (code);
DELETE FROM component_skips WHERE site_id <> 1;
ALTER TABLE component_skips DROP CONSTRAINT component_skips_pkey;
ALTER TABLE component_skips DROP COLUMN site_id;
ALTER TABLE component_skips ADD PRIMARY KEY (code);
DELETE FROM component_results WHERE site_id <> 1;
ALTER TABLE security_problems DROP CONSTRAINT security_problems_site_id_code_fkey;
ALTER TABLE security_problems DROP CONSTRAINT security_problems_pkey;
ALTER TABLE security_problems DROP COLUMN site_id;
ALTER TABLE component_results DROP CONSTRAINT component_results_pkey;
ALTER TABLE component_results DROP COLUMN site_id;
ALTER TABLE component_results ADD PRIMARY KEY (code);
ALTER TABLE security_problems ADD PRIMARY KEY (code, kind, problem);
ALTER TABLE security_problems ADD FOREIGN KEY (code) REFERENCES component_results (code) ON DELETE CASCADE;
DELETE FROM components WHERE site_id <> 1;
ALTER TABLE components DROP CONSTRAINT components_pkey;
ALTER TABLE components DROP COLUMN site_id;
ALTER TABLE components ADD PRIMARY KEY (code);
