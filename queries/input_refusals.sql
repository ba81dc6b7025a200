-- name: InputRefusalRecord :exec
-- Records that serve refused the input: since moves only when the error
-- says something else than the one recorded.
INSERT INTO input_refusals (input, path, error, since, refused_at)
VALUES (@input, @path, @error, now(), now())
ON CONFLICT (input) DO UPDATE
SET path = excluded.path,
    error = excluded.error,
    since = CASE WHEN input_refusals.error = excluded.error AND input_refusals.path = excluded.path
                 THEN input_refusals.since ELSE excluded.since END,
    refused_at = excluded.refused_at;

-- name: InputRefusalClear :execrows
-- The input was accepted: it is refused no more.
DELETE FROM input_refusals WHERE input = @input;

-- name: InputRefusalList :many
SELECT input, path, error, since, refused_at FROM input_refusals ORDER BY input;
