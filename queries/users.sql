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
