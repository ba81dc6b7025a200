-- +goose Up
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

-- +goose Down
DROP TABLE npm_provenance;
