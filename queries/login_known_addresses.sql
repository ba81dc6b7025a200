-- Addresses that signed in to an account lately; its table's comment says why.
-- Judged on the database clock, like every other throttling decision.

-- name: LoginKnownAddressCheck :one
-- Whether the address signed in to the account within the memory.
SELECT EXISTS (
    SELECT 1 FROM login_known_addresses
    WHERE account_key = @account_key AND address_key = @address_key
      AND last_success_at > clock_timestamp() - make_interval(secs => @known_seconds::float8)
) AS known;

-- name: LoginKnownAddressRemember :exec
-- Records (or refreshes) a successful sign-in of the address to the account.
INSERT INTO login_known_addresses (account_key, address_key, last_success_at)
VALUES (@account_key, @address_key, clock_timestamp())
ON CONFLICT (account_key, address_key) DO UPDATE
SET last_success_at = EXCLUDED.last_success_at;

-- name: LoginKnownAddressPurge :execrows
-- Forgets sign-ins older than the memory.
DELETE FROM login_known_addresses
WHERE last_success_at <= clock_timestamp() - make_interval(secs => @known_seconds::float8);
