-- +goose Up
-- What a check keeps of the package documents of the dependencies that
-- offered npm updates add (docs/npm.md "What an update brings"): the
-- package's first publish time, its dist-tags.latest and each version's
-- publish time, with the document's validators, so that the next check
-- asks conditionally and a 304 costs no decoding, and a dependency whose
-- stored first publish time already decides (older than the young
-- dependency window before the release) is not asked again. Nothing else
-- of the document is kept. Written only in the check's fenced writes,
-- with the row of the source whose update added the dependency.
CREATE TABLE npm_dependencies (
    registry        text        NOT NULL, -- the registry's URL, no credentials
    name            text        NOT NULL,
    etag            text        NOT NULL DEFAULT '',
    last_modified   text        NOT NULL DEFAULT '',
    -- time.created, else the earliest version's publish time; null: the
    -- document gives none.
    first_published timestamptz,
    latest          text        NOT NULL DEFAULT '', -- dist-tags.latest
    published       jsonb       NOT NULL DEFAULT '{}', -- {version: publish time}
    read_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    epoch           bigint      NOT NULL,
    PRIMARY KEY (registry, name)
);

-- +goose Down
DROP TABLE npm_dependencies;
