-- name: UserCreate :one
INSERT INTO users (email, role, password_hash)
VALUES (@email, @role, @password_hash)
RETURNING id, email, role, disabled, created_at;

-- name: UserGetByEmail :one
SELECT id, email, role, disabled, created_at
FROM users
WHERE lower(email) = lower(@email::text);

-- name: UserGetCredentials :one
-- The only query that reads password_hash: login needs it, nothing else does.
SELECT id, email, role, disabled, created_at, password_hash
FROM users
WHERE lower(email) = lower(@email::text);

-- name: UserList :many
SELECT id, email, role, disabled, created_at
FROM users
ORDER BY lower(email);

-- name: UserSetPasswordHash :execrows
UPDATE users SET password_hash = @password_hash WHERE id = @id;

-- name: UserSetDisabled :execrows
UPDATE users SET disabled = @disabled WHERE id = @id;

-- name: UserPasswordHashForShare :one
-- A login reads the hash it verified again, under a row lock, in the
-- transaction that opens its session: a password change that committed in
-- between is seen (and the login refused), and one that comes later waits
-- for the session to exist and then ends it with the others.
SELECT password_hash FROM users WHERE id = @id FOR SHARE;

-- name: UserUpgradePasswordHash :execrows
-- A login stores a hash made with new parameters only if the password is
-- still the one it checked: a rehash must never undo a password change.
UPDATE users SET password_hash = @new_hash WHERE id = @id AND password_hash = @old_hash;
