-- +goose Up
-- A check that ran to its end while some sources failed is recorded as
-- such, not as a plain "completed": the history, the CLI and the API tell
-- them apart. It completes its period like "completed" (the lease's
-- last_completed_at), so a failing publisher does not make every instance
-- retry all day.
ALTER TABLE check_runs DROP CONSTRAINT check_runs_status_check;
ALTER TABLE check_runs ADD CONSTRAINT check_runs_status_check
    CHECK (status IN ('running', 'completed', 'completed_with_failures', 'busy', 'cooldown', 'skipped',
                      'lease_lost', 'cancelled', 'failed'));
-- Runs recorded before: a "completed" run with failed sources was one.
UPDATE check_runs SET status = 'completed_with_failures' WHERE status = 'completed' AND sources_failed > 0;

-- A source's last failure as a stable kind (readmodel.ErrorKind: the pages
-- word it) and the one value its sentence needs (an HTTP status, an
-- address, a position in the document); last_error keeps the technical
-- text, shown behind it. Null for failures recorded before this migration:
-- the pages then fall back on a general sentence.
ALTER TABLE sources
    ADD COLUMN last_error_kind text,
    ADD COLUMN last_error_arg  text;

-- +goose Down
ALTER TABLE sources DROP COLUMN last_error_arg, DROP COLUMN last_error_kind;
UPDATE check_runs SET status = 'completed' WHERE status = 'completed_with_failures';
ALTER TABLE check_runs DROP CONSTRAINT check_runs_status_check;
ALTER TABLE check_runs ADD CONSTRAINT check_runs_status_check
    CHECK (status IN ('running', 'completed', 'busy', 'cooldown', 'skipped', 'lease_lost', 'cancelled', 'failed'));
