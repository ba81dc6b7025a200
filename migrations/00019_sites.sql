-- +goose Up
-- Sites (docs/design.md "Many sites"): the site upcheck runs beside, whose
-- manifest or lockfile it reads itself (id 1, always there), and any
-- number of registered sites, each pushing its own lockfile with a push
-- token of its own scope: it can push that site's inventory and nothing
-- else.
CREATE TABLE sites (
    id            bigserial   PRIMARY KEY,
    -- In URLs (/sites/NAME/…, /api/sites/NAME/lockfile) and on the command
    -- line: lower-case letters, digits and inner hyphens.
    name          text        NOT NULL UNIQUE
                              CHECK (name ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
    -- Who the site is for (a customer, a team), as the operator typed it.
    owner         text        NOT NULL DEFAULT ''
                              CHECK (owner = btrim(owner) AND char_length(owner) <= 200),
    -- sha256 of the push token; null for the site upcheck runs beside,
    -- which pushes nothing. Shown once, when made (add, rotate).
    token_hash    bytea       UNIQUE CHECK (length(token_hash) = 32),
    token_made_at timestamptz,
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- The last push accepted (changed or not), on the database clock.
    pushed_at     timestamptz,
    CHECK ((id = 1) = (token_hash IS NULL))
);
INSERT INTO sites (id, name) VALUES (1, 'local');
SELECT setval(pg_get_serial_sequence('sites', 'id'), 1);

-- Users and API tokens limited to some sites (docs/design.md "Who sees
-- what"): a user whose sites_limited is set sees only the sites listed
-- for it in user_sites; a token sees what its owner sees, narrowed to the
-- sites listed for it in token_sites when its sites_limited is set.
ALTER TABLE users ADD COLUMN sites_limited boolean NOT NULL DEFAULT false;
ALTER TABLE api_tokens ADD COLUMN sites_limited boolean NOT NULL DEFAULT false;
CREATE TABLE user_sites (
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    site_id bigint NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, site_id)
);
CREATE INDEX user_sites_site ON user_sites (site_id);
CREATE TABLE token_sites (
    token_id bigint NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
    site_id  bigint NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    PRIMARY KEY (token_id, site_id)
);
CREATE INDEX token_sites_site ON token_sites (site_id);

-- +goose Down
DROP TABLE token_sites;
DROP TABLE user_sites;
ALTER TABLE api_tokens DROP COLUMN sites_limited;
ALTER TABLE users DROP COLUMN sites_limited;
DROP TABLE sites;
