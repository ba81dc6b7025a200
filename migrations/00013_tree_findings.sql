-- +goose Up
-- The installed tree's findings (docs/feeds.md "The whole tree"): every
-- installed package version (tree_packages' name and version) matched
-- against the advisory feeds by the matcher the components use, and the
-- look-back: advisories naming a version the site had installed and no
-- longer has (tree_versions' closed intervals). Written by the tree's
-- evaluation under the check's lease, fenced, the whole set in one
-- transaction: a reader sees the last evaluation's findings or the one
-- before, never half of one.

-- One row per installed package version and advisory. An instance's row
-- comes from joining tree_packages on (name, version).
CREATE TABLE tree_findings (
    name            text        NOT NULL,
    version         text        NOT NULL,
    -- The id the merged advisory is listed under (advisory->>'id').
    advisory_id     text        NOT NULL,
    -- The merged advisory as component_results.advisories lists one
    -- (release.AdvisoryMatch: origins, aliases, severity, affected,
    -- fixed_in, no_fix, malicious, known_exploited, kev, epss…).
    advisory        jsonb       NOT NULL,
    -- Its id and aliases, upper-cased (osv.AdvisoryKeys).
    advisory_keys   text[]      NOT NULL,
    malicious       boolean     NOT NULL,
    known_exploited boolean     NOT NULL,
    -- The highest EPSS probability of its CVEs; null: not scored.
    epss            real,
    severity        text        NOT NULL DEFAULT '',
    -- The first fixed version; null: none.
    fixed_in        text,
    -- The record was withdrawn: listed apart, never counted.
    withdrawn       boolean     NOT NULL DEFAULT false,
    -- When this site first knew of it (kept while it stays a finding).
    found_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    epoch           bigint      NOT NULL,
    PRIMARY KEY (name, version, advisory_id)
);
CREATE INDEX tree_findings_keys ON tree_findings USING gin (advisory_keys);

-- What the findings were evaluated at: the tree (tree_state.tree_hash)
-- and the version of the feeds' advisories (intel_state.version), on the
-- database's clock. Every installed version is evaluated again when
-- either moved, and only then.
CREATE TABLE tree_evaluation (
    id            boolean     PRIMARY KEY DEFAULT true CHECK (id),
    tree_hash     bytea       NOT NULL,
    intel_version bigint      NOT NULL,
    evaluated_at  timestamptz NOT NULL,
    epoch         bigint      NOT NULL
);

-- The look-back: an advisory that names a version the site had installed
-- and no longer has, one row per installed interval (tree_versions) and
-- advisory, written once, when the evaluation first finds it, with its
-- audit row and its notification event in the same transaction. The
-- interval is copied: housekeeping may prune the history it came from.
CREATE TABLE tree_exposures (
    id              bigserial   PRIMARY KEY,
    interval_id     bigint      NOT NULL,
    name            text        NOT NULL,
    version         text        NOT NULL,
    advisory_id     text        NOT NULL,
    advisory        jsonb       NOT NULL,
    malicious       boolean     NOT NULL,
    known_exploited boolean     NOT NULL,
    installed_at    timestamptz NOT NULL,
    removed_at      timestamptz NOT NULL,
    found_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    epoch           bigint      NOT NULL,
    UNIQUE (interval_id, advisory_id)
);
CREATE INDEX tree_exposures_found ON tree_exposures (found_at DESC);

-- A dismissal may name the tree's package too (docs/policy.md
-- "Dismissals"): '' for a component's dismissal, as every one before;
-- one with no component ('') is the tree's.
ALTER TABLE advisory_dismissals ADD COLUMN package text NOT NULL DEFAULT '';
-- And it is a site's (docs/design.md "Many sites"): a tree's dismissal
-- covers the advisory in that site's tree alone. Sites come later
-- (00019: the site upcheck runs beside is id 1, every row before them);
-- 00025 makes it a reference to them.
ALTER TABLE advisory_dismissals ADD COLUMN site_id bigint NOT NULL DEFAULT 1;
DROP INDEX advisory_dismissals_standing;
CREATE UNIQUE INDEX advisory_dismissals_standing
    ON advisory_dismissals (component_code, package, advisory_id) WHERE ended_at IS NULL;

-- Whether a tree finding (the package name and the advisory as
-- tree_findings lists it) is dismissed on site's tree: a dismissal in
-- force (upcheck_dismissal_in_force, the one definition) of the site's
-- own that names no package covers it wherever it is in that tree, a
-- component's of that site included; one naming a package covers that
-- package alone. Another site's dismissal covers nothing here.
-- +goose StatementBegin
CREATE FUNCTION upcheck_tree_dismissed(site bigint, name text, advisory jsonb)
RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM advisory_dismissals d
                   WHERE d.site_id = site AND d.ended_at IS NULL
                     AND (d.package = '' OR d.package = name)
                     AND upcheck_dismissal_in_force(d, advisory))
$$;
-- +goose StatementEnd

-- The one definition of what a tree finding counts for, by the setting
-- UPCHECK_LOCKFILE_DEV (readmodel.DevMode: separate, include, omit): a
-- finding is counted (the summary, the badge, the banner, /metrics, the
-- notifications' count) unless it is withdrawn, dismissed, or on a
-- package installed only for development under separate or omit; a
-- malicious package is counted wherever it sits. shown: whether the pages
-- list it at all (omit hides the development ones, malicious ones aside).
-- +goose StatementBegin
CREATE FUNCTION upcheck_tree_counted(dev_mode text, dev boolean, malicious boolean, withdrawn boolean, dismissed boolean)
RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT NOT withdrawn AND NOT dismissed AND (malicious OR NOT dev OR dev_mode = 'include')
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION upcheck_tree_shown(dev_mode text, dev boolean, malicious boolean)
RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT malicious OR NOT dev OR dev_mode <> 'omit'
$$;
-- +goose StatementEnd

-- Every tree finding of a version installed now (from a registry, git or
-- a tarball: a local package, link: or file:, is the site's own code and
-- never matched), with the facts its counting reads: dev (every instance of it is installed only for
-- development: the lockfile's dev flag, or reached only through
-- devDependencies), its instances, the components that bring it in, and
-- whether it is dismissed. Read with upcheck_tree_counted and
-- upcheck_tree_shown.
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

-- What in the tree needs attention, under the setting (dev_mode), one row
-- each: the counted findings (upcheck_tree_counted) by their kind, the
-- kinds of readmodel.AttentionKinds (malicious, known_exploited,
-- vulnerable_no_fix, vulnerable), and the look-back's findings
-- (tree_exposures) as readmodel.KindExposed ('exposed') until a dismissal
-- of the advisory (for the package, or wherever it is) covers them. The
-- one definition the summary, the badge, the banner and /metrics count
-- the tree by.
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

-- The pages read both (the read model's cache is told, as for the
-- components' results).
CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON tree_findings
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();
CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON tree_exposures
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();

-- +goose Down
DROP TRIGGER read_model_changed ON tree_exposures;
DROP TRIGGER read_model_changed ON tree_findings;
DROP FUNCTION upcheck_tree_attention(text);
DROP VIEW tree_finding_state;
DROP FUNCTION upcheck_tree_shown(text, boolean, boolean);
DROP FUNCTION upcheck_tree_counted(text, boolean, boolean, boolean, boolean);
DROP FUNCTION upcheck_tree_dismissed(bigint, text, jsonb);
DROP INDEX advisory_dismissals_standing;
CREATE UNIQUE INDEX advisory_dismissals_standing
    ON advisory_dismissals (component_code, advisory_id) WHERE ended_at IS NULL;
ALTER TABLE advisory_dismissals DROP COLUMN site_id;
ALTER TABLE advisory_dismissals DROP COLUMN package;
DROP TABLE tree_exposures;
DROP TABLE tree_evaluation;
DROP TABLE tree_findings;
