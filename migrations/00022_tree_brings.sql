-- +goose Up
-- What a lockfile change brought into the site (docs/npm.md "What a
-- lockfile change brought"): one row per version a lockfile sync
-- installed (tree_versions' interval, opened by a sync that found a tree
-- stored before: the first tree read is where the history starts, not a
-- change), written pending by the sync in its transaction, then read by
-- the next check under its lease: the diff of the version it replaced
-- (previous: the versions of the package whose intervals the same sync
-- closed) against it, or, for a package newly brought in, its own install
-- scripts, exotic sources and age. Written by the check in a fenced
-- write; pruned with the history it belongs to (the interval's
-- retention, UPCHECK_TREE_HISTORY_RETENTION) by the cascade.
CREATE TABLE tree_brings (
    interval_id  bigint      PRIMARY KEY REFERENCES tree_versions (id) ON DELETE CASCADE,
    name         text        NOT NULL,
    version      text        NOT NULL,
    previous     text[]      NOT NULL DEFAULT '{}',
    installed_at timestamptz NOT NULL,
    -- pending: not read yet; read: signals says what it brought (none:
    -- nothing); unread: not read, unread says why (past_bound, failed).
    state        text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'read', 'unread')),
    unread       text        NOT NULL DEFAULT '',
    -- The version diffed against ('' for a package newly brought in).
    compared     text        NOT NULL DEFAULT '',
    -- readmodel.Signal, most pressing first.
    signals      jsonb       NOT NULL DEFAULT '[]',
    -- readmodel.UnreadDependency: dependencies it adds whose age is not known.
    unread_dependencies jsonb NOT NULL DEFAULT '[]',
    read_at      timestamptz,
    epoch        bigint      NOT NULL DEFAULT 0
);
CREATE INDEX tree_brings_name ON tree_brings (name, installed_at DESC);
CREATE INDEX tree_brings_due ON tree_brings (interval_id) WHERE state <> 'read' OR unread_dependencies <> '[]';

-- Whether a change read has a dependency it adds whose document a check
-- could not read (past the bound of dependency documents, a failed
-- fetch, its stored facts not read): a later check reads the change again
-- (TreeBringsDue); one whose document gives no publish time is not.
-- +goose StatementBegin
CREATE FUNCTION upcheck_tree_brings_unread(unread_dependencies jsonb)
RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT EXISTS (SELECT 1 FROM jsonb_array_elements(unread_dependencies) u
                   WHERE u->>'reason' IN ('past_bound', 'failed', 'not_checked'))
$$;
-- +goose StatementEnd

-- The pages and the summary read it: every instance's cache of the read
-- model is told when a check writes it, as for the tree's findings.
CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON tree_brings
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();

-- +goose Down
DROP TRIGGER read_model_changed ON tree_brings;
DROP TABLE tree_brings;
DROP FUNCTION upcheck_tree_brings_unread(jsonb);
