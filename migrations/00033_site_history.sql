-- +goose Up
-- A registered site's history (docs/design.md "A site's pages"): its
-- pushes are its audit rows (site.push, detail->>'site' its name), read
-- newest first for one site; this partial index keeps that read to the
-- site's own rows whatever the fleet's audit log holds (10,000 sites
-- pushing daily add 10,000 rows a day).
CREATE INDEX audit_log_site_push ON audit_log ((detail->>'site'), id DESC) WHERE action = 'site.push';

-- A registered site's refused push that stands, as input_refusals (00010)
-- keeps the local site's refused manifest or lockfile: one row per site
-- while its pushes are refused, gone when its next push is accepted or
-- the site is removed. A table of its own, not a site_id on
-- input_refusals, so that the previous release, whose queries write and
-- read input_refusals by input alone, runs on this schema during a
-- rolling upgrade (docs/deploy.md).
CREATE TABLE site_push_refusals (
    site_id    bigint      PRIMARY KEY REFERENCES sites (id) ON DELETE CASCADE CHECK (site_id <> 1),
    -- The pushed file's name (package-lock.json, pnpm-lock.yaml).
    path       text        NOT NULL CHECK (length(path) <= 4096),
    -- The refusal in the push's 422 words: the file, the line and the
    -- problem, never a value read from it.
    error      text        NOT NULL CHECK (length(error) <= 2000),
    -- Since when pushes have been refused with this error, and when the
    -- last one was.
    since      timestamptz NOT NULL,
    refused_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE site_push_refusals;
DROP INDEX audit_log_site_push;
