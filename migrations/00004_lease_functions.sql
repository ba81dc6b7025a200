-- +goose Up
-- The lease's transaction preamble as functions, so that the statements that
-- must run in order — timeouts, then the advisory lock, then the row lock and
-- the ownership check — cost one round trip instead of three, and run in
-- that order by construction (a function runs its statements one after the
-- other; a single SQL statement would leave the order to the planner).

-- +goose StatementBegin
CREATE FUNCTION upcheck_lease_begin(lease_key bigint, lock_timeout text, statement_timeout text, idle_timeout text)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    -- Transaction-local; statement_timeout applies from the next statement.
    PERFORM set_config('lock_timeout', lock_timeout, true);
    PERFORM set_config('statement_timeout', statement_timeout, true);
    PERFORM set_config('idle_in_transaction_session_timeout', idle_timeout, true);
    PERFORM pg_advisory_xact_lock(lease_key);
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION upcheck_lease_fence(lease_key bigint, lease_name text, lease_owner uuid,
                                    lock_timeout text, statement_timeout text, idle_timeout text)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    held_epoch bigint;
BEGIN
    PERFORM upcheck_lease_begin(lease_key, lock_timeout, statement_timeout, idle_timeout);
    -- Judged now, after the lock wait, by the wall clock: clock_timestamp(),
    -- never now(), the start of a transaction that may have waited.
    SELECT epoch INTO held_epoch
    FROM core_update_lock
    WHERE name = lease_name AND owner = lease_owner AND expires_at > clock_timestamp()
    FOR UPDATE;
    RETURN held_epoch; -- null: not this owner's live lease
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION upcheck_lease_fence(bigint, text, uuid, text, text, text);
DROP FUNCTION upcheck_lease_begin(bigint, text, text, text);
