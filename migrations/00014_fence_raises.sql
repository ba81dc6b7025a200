-- +goose Up
-- The fence raises instead of answering null: a fenced write can then be
-- sent as one pipelined batch behind it (fence, writes), in one implicit
-- transaction, and when the lease is not held the error aborts that
-- transaction before any write of the batch runs. SQLSTATE UL001 is mapped
-- to store.ErrLeaseNotHeld (internal/store/lease.go).

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION upcheck_lease_fence(lease_key bigint, lease_name text, lease_owner uuid,
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
    IF held_epoch IS NULL THEN
        RAISE EXCEPTION 'lease % not held by %', lease_name, lease_owner USING ERRCODE = 'UL001';
    END IF;
    RETURN held_epoch;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
-- Raises UN001 when pending > 0: a pipelined write that finds events to
-- queue aborts, and is written again in a transaction that queues them.
CREATE FUNCTION upcheck_nothing_to_queue(pending bigint)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF pending > 0 THEN
        RAISE EXCEPTION '% notification events to queue', pending USING ERRCODE = 'UN001';
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION upcheck_nothing_to_queue(bigint);
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION upcheck_lease_fence(lease_key bigint, lease_name text, lease_owner uuid,
                                               lock_timeout text, statement_timeout text, idle_timeout text)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    held_epoch bigint;
BEGIN
    PERFORM upcheck_lease_begin(lease_key, lock_timeout, statement_timeout, idle_timeout);
    SELECT epoch INTO held_epoch
    FROM core_update_lock
    WHERE name = lease_name AND owner = lease_owner AND expires_at > clock_timestamp()
    FOR UPDATE;
    RETURN held_epoch;
END
$$;
-- +goose StatementEnd
