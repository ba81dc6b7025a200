-- +goose Up
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
