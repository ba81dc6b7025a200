-- +goose Up
-- The installed tree (docs/npm.md, internal/tree): every package instance
-- the site's lockfile installs, the dependencies between them, and the
-- history of the versions installed. Written by the lockfile sync; a sync
-- writes the whole tree or nothing, so a sync killed midway leaves the last
-- good tree.

-- The tree as last read: one row once a lockfile was read.
CREATE TABLE tree_state (
    id          boolean     PRIMARY KEY DEFAULT true CHECK (id),
    path        text        NOT NULL CHECK (length(path) <= 4096),
    -- sha256 of the lockfile's bytes: a re-sync of the same bytes reads
    -- and writes nothing more.
    file_hash   bytea       NOT NULL,
    -- tree.Tree.Hash of the tree read: a lockfile rewritten without a
    -- change to the tree writes nothing more.
    tree_hash   bytea       NOT NULL,
    -- sha256 of the map from the site's direct dependencies to the
    -- component codes (tree_packages.components): a change of which
    -- packages are components (UPCHECK_LOCKFILE_INCLUDE) rewrites the
    -- packages' components though the file did not change.
    heads_hash  bytea       NOT NULL,
    -- Moves by one with every write, unchanged re-syncs included: a sync
    -- names the epoch it read before it read the file, and its write is
    -- refused when another sync wrote meanwhile (store.ErrTreeMoved), so
    -- an older read of the file never replaces a newer one.
    epoch       bigint      NOT NULL,
    packages    integer     NOT NULL,
    -- When the tree was last read (changed or not) and last changed.
    synced_at   timestamptz NOT NULL,
    changed_at  timestamptz NOT NULL
);

-- One row per installed package instance (tree.Package), with how the site
-- reaches it (tree.Reach).
CREATE TABLE tree_packages (
    id             text    PRIMARY KEY,
    name           text    NOT NULL,
    alias          text    NOT NULL DEFAULT '',
    version        text    NOT NULL,
    dev            boolean NOT NULL,
    optional       boolean NOT NULL,
    peer           boolean NOT NULL,
    source         text    NOT NULL CHECK (source IN ('registry', 'git', 'tarball', 'file', 'link')),
    resolved       text    NOT NULL DEFAULT '',
    integrity      text    NOT NULL DEFAULT '',
    install_script boolean NOT NULL,
    -- Reached only through the site's devDependencies.
    dev_only       boolean NOT NULL,
    -- One shortest path from each direct dependency of the site that
    -- brings it in: [{"head": "express", "path": ["express", "send", "debug"]}].
    via            jsonb   NOT NULL DEFAULT '[]',
    -- The component codes among via's heads.
    components     text[]  NOT NULL DEFAULT '{}',
    -- A hash of the row's other columns (store.treePackageRow): a sync
    -- reads these, not the rows, to find what changed, and sends only
    -- that. '' for a row written otherwise: the next sync rewrites it.
    row_hash       bytea   NOT NULL DEFAULT ''
);
CREATE INDEX tree_packages_name ON tree_packages (name, version);

-- The dependencies declared (tree.Edge); to_id null: none installed.
CREATE TABLE tree_edges (
    from_id text NOT NULL,
    name    text NOT NULL,
    kind    text NOT NULL CHECK (kind IN ('prod', 'dev', 'optional', 'peer')),
    range   text NOT NULL,
    to_id   text,
    -- As tree_packages.row_hash.
    row_hash bytea NOT NULL DEFAULT '',
    PRIMARY KEY (from_id, name, kind)
);
CREATE INDEX tree_edges_to ON tree_edges (to_id);

-- Every version of a package the tree installed, from when until when, on
-- the database's clock (removed_at null: installed now). The history a
-- look-back reads: an advisory published after a version was removed
-- still names the time it was installed. Pruned by housekeeping after the
-- retention (UPCHECK_TREE_HISTORY_RETENTION).
CREATE TABLE tree_versions (
    id           bigserial   PRIMARY KEY,
    name         text        NOT NULL,
    version      text        NOT NULL,
    installed_at timestamptz NOT NULL,
    removed_at   timestamptz,
    CHECK (removed_at IS NULL OR removed_at >= installed_at)
);
CREATE UNIQUE INDEX tree_versions_installed ON tree_versions (name, version) WHERE removed_at IS NULL;
CREATE INDEX tree_versions_name ON tree_versions (name, version);

-- +goose Down
DROP TABLE tree_versions;
DROP TABLE tree_edges;
DROP TABLE tree_packages;
DROP TABLE tree_state;
