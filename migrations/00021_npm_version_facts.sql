-- +goose Up
-- What a check read of offered npm versions beyond their package documents.
-- The source repository each offered npm version's provenance names, read
-- from its attestation bundle (docs/npm.md "What an update brings"): a
-- published version's attestations do not change, so a bundle read once
-- is never fetched again. A row is a bundle read: repository '' says it
-- names no repository upcheck reads; a bundle not read has no row.
-- Written only in the check's fenced writes, with the row of the source
-- whose offer it is.
CREATE TABLE npm_provenance (
    registry   text        NOT NULL, -- the registry's URL, no credentials
    name       text        NOT NULL,
    version    text        NOT NULL,
    repository text        NOT NULL DEFAULT '', -- normalized (npm.NormalizeRepository)
    read_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    epoch      bigint      NOT NULL,
    PRIMARY KEY (registry, name, version)
);

-- The bursts a check saw across a scope (docs/npm.md "What an update
-- brings"): for an offered version of a scoped package, the most
-- versions of the scope's packages that check read published within one
-- npm.BurstWindow holding its publish time, when more than
-- npm.BurstVersions and more than of the package alone. Kept as the most
-- any check saw (a later check may read fewer of the scope's packages),
-- so that a result evaluated without a check says it too. Written only in
-- the check's fenced writes.
CREATE TABLE npm_scope_bursts (
    registry text        NOT NULL, -- the registry's URL, no credentials
    name     text        NOT NULL,
    version  text        NOT NULL,
    scope    text        NOT NULL, -- "@acme"
    count    integer     NOT NULL CHECK (count > 0),
    read_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    epoch    bigint      NOT NULL,
    PRIMARY KEY (registry, name, version)
);

-- +goose Down
DROP TABLE npm_scope_bursts;
DROP TABLE npm_provenance;
