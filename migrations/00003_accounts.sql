-- +goose Up
-- Accounts of the admin UI and the API: users, browser sessions, API tokens
-- and login throttling. Roles map to permissions in internal/auth; the names
-- are part of the outside contract (docs/design.md section 6).
CREATE TABLE users (
    id            bigserial   PRIMARY KEY,
    -- As typed at creation; uniqueness and look-ups go through lower(email).
    email         text        NOT NULL CHECK (email <> '' AND email = btrim(email)),
    role          text        NOT NULL CHECK (role IN ('admin', 'viewer')),
    -- PHC-encoded argon2id ("$argon2id$v=19$m=…,t=…,p=…$salt$hash").
    password_hash text        NOT NULL,
    -- A disabled account keeps its rows but can neither log in nor use its
    -- sessions and tokens.
    disabled      boolean     NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX users_email_lower ON users (lower(email));

-- Browser sessions. The cookie carries a random token; only its SHA-256 is
-- stored, so a read of this table does not hand out live sessions.
CREATE TABLE sessions (
    id           bytea       PRIMARY KEY CHECK (length(id) = 32),
    user_id      bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- Random per session; rendered into pages, so stored as is.
    csrf_token   text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- Bumped at most once a minute by authentication; drives the idle timeout.
    last_seen_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- Absolute end of the session, however active it is.
    expires_at   timestamptz NOT NULL,
    user_agent   text,
    ip           text
);
CREATE INDEX sessions_user_id ON sessions (user_id);
CREATE INDEX sessions_expires_at ON sessions (expires_at);

-- API tokens ("Authorization: Bearer upc_…"). Only the SHA-256 of the token
-- is stored: the token has 256 random bits, so a fast hash is enough.
CREATE TABLE api_tokens (
    id           bigserial   PRIMARY KEY,
    user_id      bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         text        NOT NULL,
    token_hash   bytea       NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    last_used_at timestamptz,
    expires_at   timestamptz, -- null: does not expire
    revoked      boolean     NOT NULL DEFAULT false,
    -- Least privilege: a read-only token has only the view permissions of
    -- its owner (internal/auth/permissions.go decides which), whatever the
    -- owner's role.
    read_only    boolean     NOT NULL DEFAULT false
);
CREATE INDEX api_tokens_user_id ON api_tokens (user_id);

-- Login throttling, one row per key: "email:<lower email>" or "ip:<address>".
-- Every attempt is counted before the password is checked (a success gives
-- it back), so parallel guesses cannot slip past the limit.
CREATE TABLE login_attempts (
    key          text        PRIMARY KEY,
    failures     integer     NOT NULL,
    window_start timestamptz NOT NULL,
    locked_until timestamptz
);

-- The addresses that signed in to an account lately. Login throttling
-- counts failures per account across addresses to stop guessing spread over
-- many addresses, but that count is one an attacker can fill: an address
-- that proved it knows the password recently is exempt from it, so the
-- owner is never locked out of their usual address by someone else's
-- guesses. Keys are those of login_attempts: "email:<lower email>" and
-- "ip:<address or IPv6 /64>". Rows older than the memory (30 days by
-- default) no longer count and are purged.
CREATE TABLE login_known_addresses (
    account_key     text        NOT NULL,
    address_key     text        NOT NULL,
    last_success_at timestamptz NOT NULL,
    PRIMARY KEY (account_key, address_key)
);
CREATE INDEX login_known_addresses_last_success_at ON login_known_addresses (last_success_at);

-- +goose Down
DROP TABLE login_known_addresses;
DROP TABLE login_attempts;
DROP TABLE api_tokens;
DROP TABLE sessions;
DROP TABLE users;
