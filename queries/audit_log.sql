-- name: AuditAppend :one
INSERT INTO audit_log (user_id, action, detail)
VALUES (sqlc.narg(user_id), @action, @detail::jsonb)
RETURNING id;

-- name: AuditList :many
SELECT id, at, user_id, action, detail
FROM audit_log
ORDER BY id DESC
LIMIT @max_rows;
