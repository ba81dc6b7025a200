-- +goose Up
-- A check cut off from the database is recorded as such once the database
-- answers again ("Interrupted: lost its connection to the database"), not
-- as a lost lock: lease_lost stays for a lease that was refused, taken
-- over or not confirmed in time. The check itself still answers
-- lease_lost (the API's "interrupted", exit code 5 of `upcheck check`).
ALTER TABLE check_runs DROP CONSTRAINT check_runs_status_check;
ALTER TABLE check_runs ADD CONSTRAINT check_runs_status_check
    CHECK (status IN ('running', 'completed', 'completed_with_failures', 'busy', 'cooldown', 'skipped',
                      'lease_lost', 'connection_lost', 'cancelled', 'failed'));

-- +goose Down
UPDATE check_runs SET status = 'lease_lost' WHERE status = 'connection_lost';
ALTER TABLE check_runs DROP CONSTRAINT check_runs_status_check;
ALTER TABLE check_runs ADD CONSTRAINT check_runs_status_check
    CHECK (status IN ('running', 'completed', 'completed_with_failures', 'busy', 'cooldown', 'skipped',
                      'lease_lost', 'cancelled', 'failed'));
