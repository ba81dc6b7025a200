-- name: AuditAppend :one
INSERT INTO audit_log (user_id, action, detail)
VALUES (sqlc.narg(user_id), @action, @detail::jsonb)
RETURNING id;

-- name: AuditList :many
SELECT id, at, user_id, action, detail
FROM audit_log
ORDER BY id DESC
LIMIT @max_rows;

-- name: AuditPurge :execrows
DELETE FROM audit_log
WHERE at < clock_timestamp() - make_interval(days => @keep_days::int);
