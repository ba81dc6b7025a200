-- +goose Up
-- The fleet's roll-up (docs/design.md "The fleet"): each site's counts of
-- what in its installed tree needs attention, kept in one row per site
-- and setting of UPCHECK_LOCKFILE_DEV (readmodel.DevMode), so that the
-- Fleet page reads one row a site in the order it asks for, by an index,
-- instead of evaluating 10,000 trees per request. The counts are the
-- summary's (upcheck_tree_attention(site, dev_mode), the one definition:
-- one item per package version under its most urgent kind), refreshed by
-- triggers in the transaction of every write they follow: a site's tree
-- (tree_state, tree_packages), its look-back findings (tree_exposures),
-- the fleet's findings (tree_findings: the sites that install a changed
-- version) and the dismissals (the sites with a finding of the advisory).
-- What no write changes is the clock: a dismissal whose expiry passes
-- counts again at the site's next refresh (docs/design.md says so).
CREATE TABLE fleet_site_counts (
    site_id           bigint      NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    dev_mode          text        NOT NULL CHECK (dev_mode IN ('separate', 'include', 'omit')),
    -- Whether the site's tree was ever read (a tree_state row); the
    -- counts are 0 while it was not, and the pages say "not checked".
    tree              boolean     NOT NULL,
    -- Package instances installed (tree_state.packages' count).
    packages          integer     NOT NULL,
    malicious         integer     NOT NULL,
    exposed           integer     NOT NULL,
    known_exploited   integer     NOT NULL,
    vulnerable_no_fix integer     NOT NULL,
    vulnerable        integer     NOT NULL,
    total             integer     NOT NULL,
    refreshed_at      timestamptz NOT NULL,
    PRIMARY KEY (dev_mode, site_id)
);
-- The Fleet page's orders (queries/fleet.sql), each read by an index
-- from its first row: most urgent first (malicious, then all items).
CREATE INDEX fleet_site_counts_attention ON fleet_site_counts (dev_mode, malicious DESC, total DESC, site_id);
CREATE INDEX fleet_site_counts_site ON fleet_site_counts (site_id);

-- Refreshes the counts of the sites named, under every setting, from the
-- one definition: a few sites each by upcheck_tree_attention (a site's
-- costs a look-up of every finding of the fleet in its tree); many at
-- once by upcheck_fleet_tree_attention, every site's in one join of the
-- findings with the instances that install them, cheaper from
-- fleet_refresh_many sites on (performance.md).
-- +goose StatementBegin
CREATE FUNCTION upcheck_fleet_refresh(site_ids bigint[])
RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF cardinality(site_ids) < 200 THEN
        INSERT INTO fleet_site_counts (site_id, dev_mode, tree, packages, malicious, exposed, known_exploited,
                                       vulnerable_no_fix, vulnerable, total, refreshed_at)
        SELECT s.id, m.mode, t.site_id IS NOT NULL, coalesce(t.packages, 0),
               coalesce(i.malicious, 0), coalesce(i.exposed, 0), coalesce(i.known_exploited, 0),
               coalesce(i.vulnerable_no_fix, 0), coalesce(i.vulnerable, 0), coalesce(i.total, 0), clock_timestamp()
        FROM sites s
        CROSS JOIN (VALUES ('separate'), ('include'), ('omit')) m(mode)
        LEFT JOIN tree_state t ON t.site_id = s.id
        LEFT JOIN LATERAL (
            -- Each package version once, under its most urgent kind (the
            -- summary's tree_items, queries/summary.sql).
            SELECT count(*) FILTER (WHERE x.kind = 'malicious')         AS malicious,
                   count(*) FILTER (WHERE x.kind = 'exposed')           AS exposed,
                   count(*) FILTER (WHERE x.kind = 'known_exploited')   AS known_exploited,
                   count(*) FILTER (WHERE x.kind = 'vulnerable_no_fix') AS vulnerable_no_fix,
                   count(*) FILTER (WHERE x.kind = 'vulnerable')        AS vulnerable,
                   count(*)                                             AS total
            FROM (SELECT DISTINCT ON (a.name, a.version, a.kind = 'exposed') a.kind
                  FROM upcheck_tree_attention(s.id, m.mode) a
                  ORDER BY a.name, a.version, a.kind = 'exposed',
                           array_position(ARRAY['malicious', 'exposed', 'known_exploited', 'vulnerable_no_fix', 'vulnerable'], a.kind)) x
        ) i ON t.site_id IS NOT NULL
        WHERE s.id = ANY (site_ids)
        ON CONFLICT (dev_mode, site_id) DO UPDATE
        SET tree = EXCLUDED.tree, packages = EXCLUDED.packages, malicious = EXCLUDED.malicious, exposed = EXCLUDED.exposed,
            known_exploited = EXCLUDED.known_exploited, vulnerable_no_fix = EXCLUDED.vulnerable_no_fix,
            vulnerable = EXCLUDED.vulnerable, total = EXCLUDED.total, refreshed_at = EXCLUDED.refreshed_at;
        RETURN;
    END IF;
    INSERT INTO fleet_site_counts (site_id, dev_mode, tree, packages, malicious, exposed, known_exploited,
                                   vulnerable_no_fix, vulnerable, total, refreshed_at)
    WITH items AS MATERIALIZED (
        -- The same items, every site's at once.
        SELECT DISTINCT ON (a.site_id, m.mode, a.name, a.version, a.kind = 'exposed') a.site_id, m.mode, a.kind
        FROM (VALUES ('separate'), ('include'), ('omit')) m(mode)
        CROSS JOIN LATERAL upcheck_fleet_tree_attention(m.mode) a
        ORDER BY a.site_id, m.mode, a.name, a.version, a.kind = 'exposed',
                 array_position(ARRAY['malicious', 'exposed', 'known_exploited', 'vulnerable_no_fix', 'vulnerable'], a.kind)
    ),
    counted AS (
        SELECT x.site_id, x.mode,
               count(*) FILTER (WHERE x.kind = 'malicious')         AS malicious,
               count(*) FILTER (WHERE x.kind = 'exposed')           AS exposed,
               count(*) FILTER (WHERE x.kind = 'known_exploited')   AS known_exploited,
               count(*) FILTER (WHERE x.kind = 'vulnerable_no_fix') AS vulnerable_no_fix,
               count(*) FILTER (WHERE x.kind = 'vulnerable')        AS vulnerable,
               count(*)                                             AS total
        FROM items x
        GROUP BY x.site_id, x.mode
    )
    SELECT s.id, m.mode, t.site_id IS NOT NULL, coalesce(t.packages, 0),
           coalesce(i.malicious, 0), coalesce(i.exposed, 0), coalesce(i.known_exploited, 0),
           coalesce(i.vulnerable_no_fix, 0), coalesce(i.vulnerable, 0), coalesce(i.total, 0), clock_timestamp()
    FROM sites s
    CROSS JOIN (VALUES ('separate'), ('include'), ('omit')) m(mode)
    LEFT JOIN tree_state t ON t.site_id = s.id
    LEFT JOIN counted i ON t.site_id IS NOT NULL AND i.site_id = s.id AND i.mode = m.mode
    WHERE s.id = ANY (site_ids)
    ON CONFLICT (dev_mode, site_id) DO UPDATE
    SET tree = EXCLUDED.tree, packages = EXCLUDED.packages, malicious = EXCLUDED.malicious, exposed = EXCLUDED.exposed,
        known_exploited = EXCLUDED.known_exploited, vulnerable_no_fix = EXCLUDED.vulnerable_no_fix,
        vulnerable = EXCLUDED.vulnerable, total = EXCLUDED.total, refreshed_at = EXCLUDED.refreshed_at;
END
$$;
-- +goose StatementEnd

-- The sites whose counts a transaction's writes changed, refreshed once
-- each when it commits (a push writes tree_state and tree_packages in
-- several statements): a statement's trigger lists them here under the
-- transaction's id (two transactions never wait for each other's rows),
-- and a deferred trigger refreshes them all when it commits and removes
-- them, so the table is empty between transactions. Two transactions
-- that refresh one site lock its counts' rows first, in site order, and
-- count after the lock, so the second counts what the first committed.
CREATE TABLE fleet_refresh_due (
    tx      xid8   NOT NULL DEFAULT pg_current_xact_id(),
    site_id bigint NOT NULL,
    PRIMARY KEY (tx, site_id)
);
-- +goose StatementBegin
CREATE FUNCTION upcheck_fleet_due(site_ids bigint[]) RETURNS void
LANGUAGE sql VOLATILE AS $$
    INSERT INTO fleet_refresh_due (site_id)
    SELECT DISTINCT id FROM unnest(site_ids) AS u(id)
    ON CONFLICT (tx, site_id) DO NOTHING
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION upcheck_fleet_refresh_due() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    due bigint[];
BEGIN
    -- The first of the transaction's rows refreshes every site it listed;
    -- the others find theirs gone.
    WITH gone AS (DELETE FROM fleet_refresh_due WHERE tx = pg_current_xact_id() RETURNING site_id)
    SELECT array_agg(site_id ORDER BY site_id) INTO due FROM gone;
    IF due IS NOT NULL THEN
        PERFORM 1 FROM fleet_site_counts WHERE site_id = ANY (due) ORDER BY site_id, dev_mode FOR UPDATE;
        PERFORM upcheck_fleet_refresh(due);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE CONSTRAINT TRIGGER fleet_refresh AFTER INSERT ON fleet_refresh_due
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION upcheck_fleet_refresh_due();

-- +goose StatementBegin
CREATE FUNCTION upcheck_fleet_sites_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM upcheck_fleet_due(ARRAY(SELECT id FROM changed));
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER fleet_site_added AFTER INSERT ON sites
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION upcheck_fleet_sites_changed();

-- A site's own rows (tree_state, tree_packages, tree_exposures): the
-- sites in the statement's rows.
-- +goose StatementBegin
CREATE FUNCTION upcheck_fleet_tree_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM upcheck_fleet_due(ARRAY(SELECT DISTINCT site_id FROM gone));
    ELSIF TG_OP = 'UPDATE' THEN
        PERFORM upcheck_fleet_due(ARRAY(SELECT site_id FROM changed UNION SELECT site_id FROM gone));
    ELSE
        PERFORM upcheck_fleet_due(ARRAY(SELECT DISTINCT site_id FROM changed));
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
-- A sync that finds the tree unchanged moves tree_state's times alone:
-- only a changed count of packages is listed.
-- +goose StatementBegin
CREATE FUNCTION upcheck_fleet_state_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM upcheck_fleet_due(ARRAY(SELECT n.site_id FROM changed n JOIN gone o ON o.site_id = n.site_id
                                    WHERE n.packages IS DISTINCT FROM o.packages));
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER fleet_added AFTER INSERT ON tree_state
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION upcheck_fleet_tree_changed();
CREATE TRIGGER fleet_changed AFTER UPDATE ON tree_state
    REFERENCING NEW TABLE AS changed OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION upcheck_fleet_state_changed();
CREATE TRIGGER fleet_gone AFTER DELETE ON tree_state
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION upcheck_fleet_tree_changed();
CREATE TRIGGER fleet_added AFTER INSERT ON tree_packages
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION upcheck_fleet_tree_changed();
CREATE TRIGGER fleet_changed AFTER UPDATE ON tree_packages
    REFERENCING NEW TABLE AS changed OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION upcheck_fleet_tree_changed();
CREATE TRIGGER fleet_gone AFTER DELETE ON tree_packages
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION upcheck_fleet_tree_changed();
CREATE TRIGGER fleet_added AFTER INSERT ON tree_exposures
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION upcheck_fleet_tree_changed();
CREATE TRIGGER fleet_gone AFTER DELETE ON tree_exposures
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION upcheck_fleet_tree_changed();

-- The fleet's findings: the sites that install a package version whose
-- findings the statement added, removed or changed in what counting reads
-- (the kind: malicious, known exploited, no fix; withdrawn; what a
-- dismissal names and its fingerprint: the keys, severity, affected range
-- and fixed version); a finding whose EPSS alone moved refreshes nothing.
-- +goose StatementBegin
CREATE FUNCTION upcheck_fleet_findings_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM upcheck_fleet_due(ARRAY(
            SELECT DISTINCT p.site_id FROM (SELECT DISTINCT name, version FROM gone) v
            JOIN tree_packages p ON p.name = v.name AND p.version = v.version));
    ELSIF TG_OP = 'UPDATE' THEN
        PERFORM upcheck_fleet_due(ARRAY(
            SELECT DISTINCT p.site_id
            FROM (SELECT DISTINCT n.name, n.version FROM changed n
                  JOIN gone o ON o.name = n.name AND o.version = n.version AND o.advisory_id = n.advisory_id
                  WHERE (o.malicious, o.known_exploited, o.fixed_in, o.withdrawn, o.advisory_keys,
                         o.advisory->'no_fix', o.advisory->'severity', o.advisory->'affected', o.advisory->'fixed_in')
                        IS DISTINCT FROM
                        (n.malicious, n.known_exploited, n.fixed_in, n.withdrawn, n.advisory_keys,
                         n.advisory->'no_fix', n.advisory->'severity', n.advisory->'affected', n.advisory->'fixed_in')) v
            JOIN tree_packages p ON p.name = v.name AND p.version = v.version));
    ELSE
        PERFORM upcheck_fleet_due(ARRAY(
            SELECT DISTINCT p.site_id FROM (SELECT DISTINCT name, version FROM changed) v
            JOIN tree_packages p ON p.name = v.name AND p.version = v.version));
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER fleet_added AFTER INSERT ON tree_findings
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION upcheck_fleet_findings_changed();
CREATE TRIGGER fleet_changed AFTER UPDATE ON tree_findings
    REFERENCING NEW TABLE AS changed OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION upcheck_fleet_findings_changed();
CREATE TRIGGER fleet_gone AFTER DELETE ON tree_findings
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION upcheck_fleet_findings_changed();

-- The dismissals: a dismissal made, ended or changed counts the advisory
-- it names again or no more on its site, for a component's too
-- (upcheck_tree_dismissed reads every one of the site that names no
-- package): its site, when it has a finding or a look-back finding of
-- that advisory (by its id or an alias). Another site's counts stay.
-- +goose StatementBegin
CREATE FUNCTION upcheck_fleet_dismissals_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM upcheck_fleet_due(ARRAY(
        SELECT p.site_id
        FROM (SELECT DISTINCT site_id, upper(advisory_id) AS k FROM changed) d
        JOIN tree_findings f ON f.advisory_keys @> ARRAY[d.k]
        JOIN tree_packages p ON p.site_id = d.site_id AND p.name = f.name AND p.version = f.version
        UNION
        SELECT x.site_id
        FROM (SELECT DISTINCT site_id, advisory_id FROM changed) d
        JOIN tree_exposures x ON x.site_id = d.site_id AND upcheck_dismissal_names(d.advisory_id, x.advisory)));
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER fleet_added AFTER INSERT ON advisory_dismissals
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION upcheck_fleet_dismissals_changed();
CREATE TRIGGER fleet_changed AFTER UPDATE ON advisory_dismissals
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION upcheck_fleet_dismissals_changed();
CREATE TRIGGER fleet_gone AFTER DELETE ON advisory_dismissals
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION upcheck_fleet_dismissals_changed();

-- Every site there is, counted once now.
SELECT upcheck_fleet_refresh(ARRAY(SELECT id FROM sites));

-- The Fleet page's order by last push, and its stale filter.
CREATE INDEX sites_pushed ON sites (pushed_at, id);

-- +goose Down
DROP INDEX sites_pushed;
DROP TRIGGER fleet_gone ON advisory_dismissals;
DROP TRIGGER fleet_changed ON advisory_dismissals;
DROP TRIGGER fleet_added ON advisory_dismissals;
DROP FUNCTION upcheck_fleet_dismissals_changed();
DROP TRIGGER fleet_gone ON tree_findings;
DROP TRIGGER fleet_changed ON tree_findings;
DROP TRIGGER fleet_added ON tree_findings;
DROP FUNCTION upcheck_fleet_findings_changed();
DROP TRIGGER fleet_gone ON tree_exposures;
DROP TRIGGER fleet_added ON tree_exposures;
DROP TRIGGER fleet_gone ON tree_packages;
DROP TRIGGER fleet_changed ON tree_packages;
DROP TRIGGER fleet_added ON tree_packages;
DROP TRIGGER fleet_gone ON tree_state;
DROP TRIGGER fleet_changed ON tree_state;
DROP TRIGGER fleet_added ON tree_state;
DROP FUNCTION upcheck_fleet_state_changed();
DROP FUNCTION upcheck_fleet_tree_changed();
DROP TRIGGER fleet_site_added ON sites;
DROP FUNCTION upcheck_fleet_sites_changed();
DROP TRIGGER fleet_refresh ON fleet_refresh_due;
DROP FUNCTION upcheck_fleet_refresh_due();
DROP FUNCTION upcheck_fleet_due(bigint[]);
DROP TABLE fleet_refresh_due;
DROP FUNCTION upcheck_fleet_refresh(bigint[]);
DROP TABLE fleet_site_counts;
