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
