-- +goose Up
-- What clears each finding on the installed tree (docs/npm.md, "What
-- clears a finding", internal/remedy): the fix decided for each finding,
-- and what the fixes read of the registry documents of the packages on the
-- findings' paths, kept between checks so that the next check fetches
-- them conditionally. Both are written by the check, fenced; the next
-- check's decision replaces them.

-- The fix of one finding: remedy.Fix's JSON, worded by readmodel.TreeFixText
-- when read. A package instance that leaves the tree takes its fixes with it.
CREATE TABLE tree_fixes (
    package_id  text        NOT NULL REFERENCES tree_packages (id) ON DELETE CASCADE,
    advisory_id text        NOT NULL,
    fix         jsonb       NOT NULL CHECK (fix ? 'kind'),
    -- The finding is on a direct dependency of the site (a component
    -- itself), not in a component's dependencies: "clears 3 advisories
    -- (2 in its dependencies)".
    direct      boolean     NOT NULL DEFAULT false,
    decided_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    epoch       bigint      NOT NULL,
    PRIMARY KEY (package_id, advisory_id)
);

-- What a fix reads of one package's registry document (remedy.Document's
-- JSON: the "latest" tag and, for each release at or above floor, the
-- ranges of its dependencies), with the response's validators. Only the
-- packages the last check's findings needed are kept.
CREATE TABLE tree_fix_documents (
    name          text        PRIMARY KEY,
    -- The lowest release kept: a tree that installs a lower one needs
    -- the document again, unconditionally.
    floor         text        NOT NULL DEFAULT '',
    etag          text        NOT NULL DEFAULT '',
    last_modified text        NOT NULL DEFAULT '',
    document      jsonb       NOT NULL,
    fetched_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    epoch         bigint      NOT NULL
);

-- +goose Down
DROP TABLE tree_fix_documents;
DROP TABLE tree_fixes;
