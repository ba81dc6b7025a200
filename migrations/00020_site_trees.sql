-- +goose Up
-- Each site's installed tree (docs/design.md "Many sites"): the tables
-- that say what a site installs, how it reaches it and what it installed
-- before are kept per site; what is read of a package version (its
-- findings, tree_findings; its documents, tree_fix_documents and
-- npm_dependencies) stays one row for the whole fleet, read once however
-- many sites install it. The rows written before sites existed are the
-- site upcheck runs beside (sites.id 1).
ALTER TABLE tree_state ADD COLUMN site_id bigint NOT NULL DEFAULT 1 REFERENCES sites (id) ON DELETE CASCADE;
ALTER TABLE tree_state DROP CONSTRAINT tree_state_pkey;
ALTER TABLE tree_state DROP COLUMN id;
ALTER TABLE tree_state ADD PRIMARY KEY (site_id);

ALTER TABLE tree_fixes DROP CONSTRAINT tree_fixes_package_id_fkey;
ALTER TABLE tree_fixes DROP CONSTRAINT tree_fixes_pkey;

ALTER TABLE tree_packages ADD COLUMN site_id bigint NOT NULL DEFAULT 1 REFERENCES sites (id) ON DELETE CASCADE;
ALTER TABLE tree_packages DROP CONSTRAINT tree_packages_pkey;
ALTER TABLE tree_packages ADD PRIMARY KEY (site_id, id);
-- tree_packages_name (name, version) stays: which sites install a
-- package, across the fleet.

ALTER TABLE tree_fixes ADD COLUMN site_id bigint NOT NULL DEFAULT 1;
ALTER TABLE tree_fixes ADD PRIMARY KEY (site_id, package_id, advisory_id);
ALTER TABLE tree_fixes ADD FOREIGN KEY (site_id, package_id) REFERENCES tree_packages (site_id, id) ON DELETE CASCADE;

ALTER TABLE tree_edges ADD COLUMN site_id bigint NOT NULL DEFAULT 1 REFERENCES sites (id) ON DELETE CASCADE;
ALTER TABLE tree_edges DROP CONSTRAINT tree_edges_pkey;
ALTER TABLE tree_edges ADD PRIMARY KEY (site_id, from_id, name, kind);
DROP INDEX tree_edges_to;
CREATE INDEX tree_edges_to ON tree_edges (site_id, to_id);

ALTER TABLE tree_versions ADD COLUMN site_id bigint NOT NULL DEFAULT 1 REFERENCES sites (id) ON DELETE CASCADE;
DROP INDEX tree_versions_installed;
CREATE UNIQUE INDEX tree_versions_installed ON tree_versions (site_id, name, version) WHERE removed_at IS NULL;
-- tree_versions_name (name, version) stays: which sites ever installed a
-- version, across the fleet.

ALTER TABLE tree_exposures ADD COLUMN site_id bigint NOT NULL DEFAULT 1 REFERENCES sites (id) ON DELETE CASCADE;
CREATE INDEX tree_exposures_site ON tree_exposures (site_id, found_at DESC);

-- +goose Down
DROP INDEX tree_exposures_site;
ALTER TABLE tree_exposures DROP COLUMN site_id;
DELETE FROM tree_versions WHERE site_id <> 1;
DROP INDEX tree_versions_installed;
ALTER TABLE tree_versions DROP COLUMN site_id;
CREATE UNIQUE INDEX tree_versions_installed ON tree_versions (name, version) WHERE removed_at IS NULL;
DELETE FROM tree_edges WHERE site_id <> 1;
DROP INDEX tree_edges_to;
ALTER TABLE tree_edges DROP CONSTRAINT tree_edges_pkey;
ALTER TABLE tree_edges DROP COLUMN site_id;
ALTER TABLE tree_edges ADD PRIMARY KEY (from_id, name, kind);
CREATE INDEX tree_edges_to ON tree_edges (to_id);
DELETE FROM tree_fixes WHERE site_id <> 1;
ALTER TABLE tree_fixes DROP CONSTRAINT tree_fixes_site_id_package_id_fkey;
ALTER TABLE tree_fixes DROP CONSTRAINT tree_fixes_pkey;
ALTER TABLE tree_fixes DROP COLUMN site_id;
DELETE FROM tree_packages WHERE site_id <> 1;
ALTER TABLE tree_packages DROP CONSTRAINT tree_packages_pkey;
ALTER TABLE tree_packages DROP COLUMN site_id;
ALTER TABLE tree_packages ADD PRIMARY KEY (id);
ALTER TABLE tree_fixes ADD PRIMARY KEY (package_id, advisory_id);
ALTER TABLE tree_fixes ADD FOREIGN KEY (package_id) REFERENCES tree_packages (id) ON DELETE CASCADE;
DELETE FROM tree_state WHERE site_id <> 1;
ALTER TABLE tree_state DROP CONSTRAINT tree_state_pkey;
ALTER TABLE tree_state DROP COLUMN site_id;
ALTER TABLE tree_state ADD COLUMN id boolean PRIMARY KEY DEFAULT true CHECK (id);
