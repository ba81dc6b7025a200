-- +goose Up
-- Every check, refused ones too. A write here is not fenced: a run that
-- lost its lease must still record that it did.
CREATE TABLE check_runs (
    id                    bigserial   PRIMARY KEY,
    trigger               text        NOT NULL,
    actor                 text,       -- the user, "cron", or "cli"
    owner                 uuid,       -- the lease owner, for acquired runs
    epoch                 bigint,
    started_at            timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at           timestamptz,
    -- completed_with_failures: the check ran to its end while some sources
    -- failed; it completes its period like "completed" (the lease's
    -- last_completed_at), so a failing publisher does not make every
    -- instance retry all day. connection_lost: the check was cut off from
    -- the database, recorded once the database answers again; lease_lost
    -- is a lease that was refused, taken over or not confirmed in time.
    status                text        NOT NULL,
    sources_fetched       integer     NOT NULL DEFAULT 0,
    sources_not_modified  integer     NOT NULL DEFAULT 0,
    sources_failed        integer     NOT NULL DEFAULT 0,
    sources_skipped       integer     NOT NULL DEFAULT 0,
    duration_ms           bigint,
    error                 text,
    -- Of the sources a run did not finish (sources_skipped), those that were
    -- fetched but whose outcome was not written because the check stopped
    -- first; the others were never started.
    sources_unwritten     integer     NOT NULL DEFAULT 0,
    CONSTRAINT check_runs_status_check
        CHECK (status IN ('running', 'completed', 'completed_with_failures', 'busy', 'cooldown', 'skipped',
                          'lease_lost', 'connection_lost', 'cancelled', 'failed'))
);
CREATE INDEX check_runs_started_at ON check_runs (started_at DESC);

-- Small settings that belong to the installation, not to one process (the
-- check schedule's daily time, chosen on first use).
CREATE TABLE app_settings (
    key   text PRIMARY KEY,
    value text NOT NULL
);

-- +goose Down
DROP TABLE app_settings;
DROP TABLE check_runs;
