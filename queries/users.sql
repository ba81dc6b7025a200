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

-- advisory_dismissals and audit_log. By the one-file-per-table rule these
-- belong in queries/advisory_dismissals.sql and queries/audit_log.sql; moving
-- them there changes only the name of the generated file.

-- name: AdvisoryDismiss :execrows
-- A second dismissal of the same advisory keeps the first one's author and
-- time, and reports no change so that it is not audited twice.
INSERT INTO advisory_dismissals (component_code, advisory_id, user_id)
VALUES (@component_code, @advisory_id, sqlc.narg(user_id))
ON CONFLICT (component_code, advisory_id) DO NOTHING;

-- name: AdvisoryUndismiss :execrows
DELETE FROM advisory_dismissals
WHERE component_code = @component_code AND advisory_id = @advisory_id;

-- name: AdvisoryDismissalList :many
SELECT component_code, advisory_id, user_id, dismissed_at
FROM advisory_dismissals
ORDER BY component_code, advisory_id;

-- name: AuditAppend :one
INSERT INTO audit_log (user_id, action, detail)
VALUES (sqlc.narg(user_id), @action, @detail::jsonb)
RETURNING id;

-- name: AuditList :many
SELECT id, at, user_id, action, detail
FROM audit_log
ORDER BY id DESC
LIMIT @max_rows;
