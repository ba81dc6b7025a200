-- +goose Up
-- Each site's installed tree read by site (docs/design.md "Many sites"):
-- the views and functions over the tree (00013, 00015, 00016) were written
-- before the tree had a site (00020); here they take it. A finding
-- (tree_findings) stays one row per package version and advisory for the
-- whole fleet; what a site sees of it (its instances, whether they are
-- installed only for development, the components that bring it in) is
-- read from that site's tree_packages.

-- tree_finding_state: one row per site that installs the finding's
-- version (site_id, last: a view keeps its columns' order).
CREATE OR REPLACE VIEW tree_finding_state AS
SELECT f.name, f.version, f.advisory_id, f.advisory, f.advisory_keys, f.malicious, f.known_exploited, f.epss,
       f.severity, f.fixed_in, f.withdrawn, f.found_at,
       p.dev, p.instances, p.components,
       upcheck_tree_dismissed(p.site_id, f.name, f.advisory) AS dismissed,
       p.site_id
FROM tree_findings f
JOIN LATERAL (SELECT tp.site_id, bool_and(tp.dev OR tp.dev_only) AS dev, count(*)::integer AS instances,
                     coalesce((SELECT array_agg(DISTINCT c ORDER BY c)
                               FROM tree_packages tc CROSS JOIN LATERAL unnest(tc.components) c
                               WHERE tc.site_id = tp.site_id AND tc.name = f.name AND tc.version = f.version
                                 AND tc.source NOT IN ('link', 'file')), '{}')::text[] AS components
              FROM tree_packages tp
              WHERE tp.name = f.name AND tp.version = f.version AND tp.source NOT IN ('link', 'file')
              GROUP BY tp.site_id) p ON true;

-- tree_package_names: one row per site and package name.
CREATE OR REPLACE VIEW tree_package_names AS
SELECT t.name,
       array_agg(DISTINCT t.version ORDER BY t.version)::text[]                               AS versions,
       count(*)::integer                                                                       AS instances,
       bool_and(t.dev OR t.dev_only)                                                           AS dev,
       bool_or(t.install_script)                                                               AS install_script,
       coalesce(array_agg(DISTINCT t.source ORDER BY t.source) FILTER (WHERE t.source <> 'registry'),
                '{}')::text[]                                                                  AS other_sources,
       coalesce((SELECT array_agg(DISTINCT c.code ORDER BY c.code)
                   FROM tree_packages u CROSS JOIN LATERAL unnest(u.components) AS c(code)
                  WHERE u.site_id = t.site_id AND u.name = t.name), '{}')::text[]             AS components,
       coalesce((SELECT array_agg(DISTINCT v.e->>'head' ORDER BY v.e->>'head')
                   FROM tree_packages u CROSS JOIN LATERAL jsonb_array_elements(u.via) AS v(e)
                  WHERE u.site_id = t.site_id AND u.name = t.name), '{}')::text[]             AS heads,
       coalesce((SELECT v.e->'path'
                   FROM tree_packages u CROSS JOIN LATERAL jsonb_array_elements(u.via) AS v(e)
                  WHERE u.site_id = t.site_id AND u.name = t.name
                  ORDER BY jsonb_array_length(v.e->'path'), v.e->>'head'
                  LIMIT 1), '[]')::jsonb                                                       AS path,
       t.site_id
FROM tree_packages t
GROUP BY t.site_id, t.name;

-- A site's reads by name (its instances of a package, its history of it).
CREATE INDEX tree_packages_site_name ON tree_packages (site_id, name, version);
CREATE INDEX tree_versions_site_name ON tree_versions (site_id, name, version);

-- What in the sites' trees needs attention (00013's definition, by
-- site): the counted findings on each site's instances, and each site's
-- look-back findings, with the site's id. upcheck_tree_attention is one
-- site's: this function filtered, which the planner inlines (the filter
-- reaches tree_finding_state's per-site rows); the fleet's counts read
-- every site's at once (migrations/00024_fleet.sql).
DROP FUNCTION upcheck_component_tree_attention(text);
DROP FUNCTION upcheck_tree_attention(text);
-- +goose StatementBegin
CREATE FUNCTION upcheck_fleet_tree_attention(dev_mode text)
RETURNS TABLE (site_id bigint, kind text, name text, version text, advisory_id text, malicious boolean, dev boolean,
               installed_at timestamptz, removed_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT f.site_id,
           CASE WHEN f.malicious THEN 'malicious'
                WHEN f.known_exploited THEN 'known_exploited'
                WHEN coalesce((f.advisory->>'no_fix')::boolean, f.fixed_in IS NULL) THEN 'vulnerable_no_fix'
                ELSE 'vulnerable' END,
           f.name, f.version, f.advisory_id, f.malicious, f.dev, NULL::timestamptz, NULL::timestamptz
    FROM tree_finding_state f
    WHERE upcheck_tree_counted(dev_mode, f.dev, f.malicious, f.withdrawn, f.dismissed)
    UNION ALL
    SELECT x.site_id, 'exposed', x.name, x.version, x.advisory_id, x.malicious, false, x.installed_at, x.removed_at
    FROM tree_exposures x
    WHERE NOT upcheck_tree_dismissed(x.site_id, x.name, x.advisory)
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION upcheck_tree_attention(site bigint, dev_mode text)
RETURNS TABLE (kind text, name text, version text, advisory_id text, malicious boolean, dev boolean,
               installed_at timestamptz, removed_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT a.kind, a.name, a.version, a.advisory_id, a.malicious, a.dev, a.installed_at, a.removed_at
    FROM upcheck_fleet_tree_attention(dev_mode) a
    WHERE a.site_id = site
$$;
-- +goose StatementEnd

-- What in each component's dependencies needs attention (00016's
-- definition, by site): the components are the site's.
-- +goose StatementBegin
CREATE FUNCTION upcheck_component_tree_attention(site bigint, dev_mode text)
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

-- Read once for the fleet (docs/feeds.md "The whole tree"): the package
-- versions whose findings (tree_findings, those with none included) were
-- matched at the feeds' version the evaluation recorded
-- (tree_evaluation.intel_version): a version any site installs, or
-- installed once, is matched against the feeds once per version of the
-- feeds however many sites have it. Emptied when the feeds' version moves.
CREATE TABLE tree_matched (
    name    text NOT NULL,
    version text NOT NULL,
    PRIMARY KEY (name, version)
);

-- The tree of each site whose versions the evaluation last matched (its
-- tree_state.tree_hash then; null: never): a site whose tree moved since
-- is evaluated again, its versions not in tree_matched matched.
ALTER TABLE tree_state ADD COLUMN evaluated_hash bytea;

-- What the fleet's trees were when their findings were last written
-- (tree_evaluation.tree_hash): a hash over every site's tree (each site's
-- id and its tree_state.tree_hash, in site order). Which site's versions
-- were matched is each site's evaluated_hash.
CREATE VIEW tree_fleet_hash AS
SELECT sha256(coalesce(string_agg(s.site_id::text || ':' || encode(s.tree_hash, 'hex'), ',' ORDER BY s.site_id), '')::bytea)
           AS tree_hash,
       count(*)::integer AS sites
FROM tree_state s;

-- +goose Down
DROP VIEW tree_fleet_hash;
ALTER TABLE tree_state DROP COLUMN evaluated_hash;
DROP TABLE tree_matched;
DROP FUNCTION upcheck_component_tree_attention(bigint, text);
DROP FUNCTION upcheck_tree_attention(bigint, text);
DROP FUNCTION upcheck_fleet_tree_attention(text);
DROP INDEX tree_versions_site_name;
DROP INDEX tree_packages_site_name;
DROP VIEW tree_package_names;
CREATE VIEW tree_package_names AS
SELECT t.name,
       array_agg(DISTINCT t.version ORDER BY t.version)::text[]                               AS versions,
       count(*)::integer                                                                       AS instances,
       bool_and(t.dev OR t.dev_only)                                                           AS dev,
       bool_or(t.install_script)                                                               AS install_script,
       coalesce(array_agg(DISTINCT t.source ORDER BY t.source) FILTER (WHERE t.source <> 'registry'),
                '{}')::text[]                                                                  AS other_sources,
       coalesce((SELECT array_agg(DISTINCT c.code ORDER BY c.code)
                   FROM tree_packages u CROSS JOIN LATERAL unnest(u.components) AS c(code)
                  WHERE u.name = t.name), '{}')::text[]                                        AS components,
       coalesce((SELECT array_agg(DISTINCT v.e->>'head' ORDER BY v.e->>'head')
                   FROM tree_packages u CROSS JOIN LATERAL jsonb_array_elements(u.via) AS v(e)
                  WHERE u.name = t.name), '{}')::text[]                                        AS heads,
       coalesce((SELECT v.e->'path'
                   FROM tree_packages u CROSS JOIN LATERAL jsonb_array_elements(u.via) AS v(e)
                  WHERE u.name = t.name
                  ORDER BY jsonb_array_length(v.e->'path'), v.e->>'head'
                  LIMIT 1), '[]')::jsonb                                                       AS path
FROM tree_packages t
GROUP BY t.name;
DROP VIEW tree_finding_state;
CREATE VIEW tree_finding_state AS
SELECT f.name, f.version, f.advisory_id, f.advisory, f.advisory_keys, f.malicious, f.known_exploited, f.epss,
       f.severity, f.fixed_in, f.withdrawn, f.found_at,
       p.dev, p.instances, p.components,
       upcheck_tree_dismissed(1, f.name, f.advisory) AS dismissed
FROM tree_findings f
JOIN LATERAL (SELECT bool_and(tp.dev OR tp.dev_only) AS dev, count(*)::integer AS instances,
                     coalesce((SELECT array_agg(DISTINCT c ORDER BY c)
                               FROM tree_packages tc CROSS JOIN LATERAL unnest(tc.components) c
                               WHERE tc.name = f.name AND tc.version = f.version
                                 AND tc.source NOT IN ('link', 'file')), '{}')::text[] AS components
              FROM tree_packages tp
              WHERE tp.name = f.name AND tp.version = f.version AND tp.source NOT IN ('link', 'file')) p ON p.instances > 0;
-- +goose StatementBegin
CREATE FUNCTION upcheck_tree_attention(dev_mode text)
RETURNS TABLE (kind text, name text, version text, advisory_id text, malicious boolean, dev boolean,
               installed_at timestamptz, removed_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN f.malicious THEN 'malicious'
                WHEN f.known_exploited THEN 'known_exploited'
                WHEN coalesce((f.advisory->>'no_fix')::boolean, f.fixed_in IS NULL) THEN 'vulnerable_no_fix'
                ELSE 'vulnerable' END,
           f.name, f.version, f.advisory_id, f.malicious, f.dev, NULL::timestamptz, NULL::timestamptz
    FROM tree_finding_state f
    WHERE upcheck_tree_counted(dev_mode, f.dev, f.malicious, f.withdrawn, f.dismissed)
    UNION ALL
    SELECT 'exposed', x.name, x.version, x.advisory_id, x.malicious, false, x.installed_at, x.removed_at
    FROM tree_exposures x
    WHERE NOT upcheck_tree_dismissed(1, x.name, x.advisory)
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION upcheck_component_tree_attention(dev_mode text)
RETURNS TABLE (code text, kind text, name text, version text, advisory_id text, malicious boolean, instance_id text)
LANGUAGE sql STABLE AS $$
    SELECT c.code, a.kind, a.name, a.version, a.advisory_id, a.malicious, p.id
    FROM upcheck_tree_attention(dev_mode) a
    JOIN tree_packages p ON p.name = a.name AND p.version = a.version AND p.source NOT IN ('link', 'file')
    CROSS JOIN LATERAL unnest(p.components) AS c(code)
    JOIN components k ON k.code = c.code
    WHERE a.kind <> 'exposed'
      AND NOT (p.name IS NOT DISTINCT FROM k.package
               AND EXISTS (SELECT 1 FROM jsonb_array_elements(p.via) AS v(e) WHERE jsonb_array_length(v.e->'path') = 1))
$$;
-- +goose StatementEnd
