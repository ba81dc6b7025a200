-- The installed tree (migrations/00012_tree.sql, docs/npm.md "The installed
-- tree"), each site's (@site: sites.id; 1 is the site upcheck runs
-- beside). A sync writes it in one transaction that holds the lease's
-- lock (store.Tx.TreeWrite): the state first, locked, then only what
-- changed, found by comparing each row's hash with the stored one's.

-- name: TreeStateLock :one
-- The tree's state, locked until the commit, and the database's time, the
-- one instant every row of this write is stamped with (an interval closed
-- and the one opened by the same sync meet at it). No row: never written.
SELECT coalesce(s.epoch, 0)::bigint AS epoch, coalesce(s.file_hash, '')::bytea AS file_hash,
       coalesce(s.tree_hash, '')::bytea AS tree_hash, coalesce(s.heads_hash, '')::bytea AS heads_hash,
       clock_timestamp()::timestamptz AS now
FROM (VALUES (1)) one
LEFT JOIN LATERAL (SELECT * FROM tree_state WHERE site_id = @site FOR UPDATE) s ON true;

-- name: TreeStateGet :one
SELECT path, file_hash, tree_hash, heads_hash, epoch, packages, synced_at, changed_at
FROM tree_state
WHERE site_id = @site;

-- name: TreeStateTouch :exec
-- A sync that read the tree as stored: it was read at now, nothing else
-- moves (the epoch does, see tree_state.epoch).
UPDATE tree_state
SET path = @path, file_hash = @file_hash, synced_at = @now, epoch = epoch + 1
WHERE site_id = @site;

-- name: TreeStateTouchAt :one
-- TreeStateTouch for a sync that found the tree unchanged from the state
-- it read at @epoch, outside any lock: it moves synced_at (on the
-- database's clock) and the epoch only while the state is still the one
-- read (a compare-and-set on the epoch; no row: another sync wrote). Its
-- commit does not wait for the WAL's flush (synchronous_commit off for
-- this statement's transaction alone): it records only when the file was
-- last read, and a crash that loses it loses that time, which the next
-- sync writes again; every other write of the tree waits for its flush.
UPDATE tree_state
SET path = @path, file_hash = @file_hash, synced_at = clock_timestamp(), epoch = epoch + 1
WHERE site_id = @site AND epoch = @epoch AND set_config('synchronous_commit', 'off', true) = 'off'
RETURNING synced_at;

-- name: TreeStateWrite :exec
INSERT INTO tree_state (site_id, path, file_hash, tree_hash, heads_hash, epoch, packages, synced_at, changed_at)
VALUES (@site, @path, @file_hash, @tree_hash, @heads_hash, 1, @packages, @now, @now)
ON CONFLICT (site_id) DO UPDATE
SET path = excluded.path, file_hash = excluded.file_hash, tree_hash = excluded.tree_hash,
    heads_hash = excluded.heads_hash, epoch = tree_state.epoch + 1, packages = excluded.packages,
    synced_at = excluded.synced_at, changed_at = excluded.changed_at;

-- name: TreePackageHashes :many
-- What a sync compares its rows with: each stored row's key and hash.
SELECT id, row_hash FROM tree_packages WHERE site_id = @site;

-- name: TreeEdgeHashes :many
SELECT from_id, name, kind, row_hash FROM tree_edges WHERE site_id = @site;

-- name: TreePackagesPut :exec
-- Writes the rows of @packages (a JSON array, store.treePackageRow) that
-- changed: a sync sends only those whose hash differs from the stored
-- row's. Each row is looked up by its key.
INSERT INTO tree_packages (site_id, id, name, alias, version, dev, optional, peer, source, resolved, integrity,
                           install_script, dev_only, via, components, row_hash)
SELECT @site::bigint, i.id, i.name, i.alias, i.version, i.dev, i.optional, i.peer, i.source, i.resolved, i.integrity,
       i.install_script, i.dev_only, i.via, i.components, i.row_hash
FROM jsonb_populate_recordset(NULL::tree_packages, @packages::jsonb) i
ON CONFLICT (site_id, id) DO UPDATE
SET name = excluded.name, alias = excluded.alias, version = excluded.version, dev = excluded.dev,
    optional = excluded.optional, peer = excluded.peer, source = excluded.source, resolved = excluded.resolved,
    integrity = excluded.integrity, install_script = excluded.install_script, dev_only = excluded.dev_only,
    via = excluded.via, components = excluded.components, row_hash = excluded.row_hash;

-- name: TreePackagesAdd :copyfrom
-- Inserts new rows (none stored under their keys: TreeWrite read the
-- stored keys under the lease's lock) by COPY: a first sync's thousands of
-- rows in a fraction of the time an INSERT from JSON takes.
INSERT INTO tree_packages (site_id, id, name, alias, version, dev, optional, peer, source, resolved, integrity,
                           install_script, dev_only, via, components, row_hash)
VALUES (@site_id, @id, @name, @alias, @version, @dev, @optional, @peer, @source, @resolved, @integrity,
        @install_script, @dev_only, @via, @components, @row_hash);

-- name: TreeEdgesAdd :copyfrom
INSERT INTO tree_edges (site_id, from_id, name, kind, range, to_id, row_hash)
VALUES (@site_id, @from_id, @name, @kind, @range, @to_id, @row_hash);

-- name: TreePackagesDelete :execrows
DELETE FROM tree_packages WHERE site_id = @site AND id = ANY (@ids::text[]);

-- name: TreeEdgesPut :exec
-- Writes the edges of @edges (store.treeEdgeRow), as TreePackagesPut.
INSERT INTO tree_edges (site_id, from_id, name, kind, range, to_id, row_hash)
SELECT @site::bigint, i.from_id, i.name, i.kind, i.range, i.to_id, i.row_hash
FROM jsonb_populate_recordset(NULL::tree_edges, @edges::jsonb) i
ON CONFLICT (site_id, from_id, name, kind) DO UPDATE
SET range = excluded.range, to_id = excluded.to_id, row_hash = excluded.row_hash;

-- name: TreeEdgesDelete :execrows
-- Deletes the edges @keys names (a JSON array of {from_id, name, kind}).
DELETE FROM tree_edges t
USING jsonb_array_elements(@keys::jsonb) k
WHERE t.site_id = @site AND t.from_id = k->>'from_id' AND t.name = k->>'name' AND t.kind = k->>'kind';

-- name: TreeVersionsWrite :one
-- The history follows tree_packages as written: a (name, version) no
-- instance installs any more has its interval closed at @now, one
-- installed with no open interval gets one opened at @now. Run after
-- TreePackagesWrite, in its transaction.
WITH installed AS (
    SELECT DISTINCT p.name, p.version FROM tree_packages p WHERE p.site_id = @site::bigint
),
closed AS (
    UPDATE tree_versions v SET removed_at = @now::timestamptz
    WHERE v.site_id = @site::bigint AND v.removed_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM installed i WHERE i.name = v.name AND i.version = v.version)
    RETURNING 1
),
opened AS (
    INSERT INTO tree_versions (site_id, name, version, installed_at)
    SELECT @site::bigint, i.name, i.version, @now FROM installed i
    WHERE NOT EXISTS (SELECT 1 FROM tree_versions v
                      WHERE v.site_id = @site::bigint AND v.name = i.name AND v.version = i.version AND v.removed_at IS NULL)
    RETURNING 1
)
SELECT (SELECT count(*) FROM closed)::int AS closed,
       (SELECT count(*) FROM opened)::int AS opened;

-- name: TreePackagesPage :many
-- The whole tree for evaluation, in pages by id (keyset): the rows after
-- @after, at most @lim.
SELECT id, name, version, dev_only, via, components
FROM tree_packages
WHERE site_id = @site AND id > @after
ORDER BY id
LIMIT @lim;

-- name: TreePackagesByName :many
SELECT id, name, alias, version, dev, optional, peer, source, resolved, integrity, install_script,
       dev_only, via, components
FROM tree_packages
WHERE site_id = @site AND name = @name
ORDER BY version, id;

-- name: TreeVersionsOf :many
-- A package's installed versions, newest interval first.
SELECT name, version, installed_at, removed_at
FROM tree_versions
WHERE site_id = @site AND name = @name
ORDER BY installed_at DESC, version;

-- name: TreeVersionsPurge :execrows
-- Intervals that ended more than @keep_seconds ago, on the database's
-- clock; an open one (installed now) is kept
-- however old.
DELETE FROM tree_versions WHERE removed_at < clock_timestamp() - make_interval(secs => @keep_seconds::float8);
