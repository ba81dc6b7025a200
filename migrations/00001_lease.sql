-- +goose Up
-- The lease that makes update checks exclusive across instances, its
-- transaction preamble and the record of its acquisitions. See
-- internal/lease/doc.go for the model; the names here are part of the
-- outside contract (docs/design.md section 6): add columns, never rename.
CREATE TABLE core_update_lock (
    name              text        PRIMARY KEY,
    -- The current holder, or null when released.
    owner             uuid,
    -- Grows by one at every acquisition; stored with every row a holder writes.
    epoch             bigint      NOT NULL DEFAULT 0,
    -- Database-clock instant after which the holder no longer owns the lease.
    expires_at        timestamptz,
    -- Cooldown stamp: when the last manual check acquired the lease.
    last_manual_at    timestamptz,
    -- When a check last completed and released the lease; drives the
    -- once-per-period skip of scheduled checks.
    last_completed_at timestamptz,
    acquired_at       timestamptz,
    trigger           text,
    CONSTRAINT core_update_lock_owner_expires CHECK ((owner IS NULL) = (expires_at IS NULL))
);

INSERT INTO core_update_lock (name) VALUES ('check');

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

-- The fence raises instead of answering null: a fenced write can then be
-- sent as one pipelined batch behind it (fence, writes), in one implicit
-- transaction, and when the lease is not held the error aborts that
-- transaction before any write of the batch runs. SQLSTATE UL001 is mapped
-- to store.ErrLeaseNotHeld (internal/store/lease.go).
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
    IF held_epoch IS NULL THEN
        RAISE EXCEPTION 'lease % not held by %', lease_name, lease_owner USING ERRCODE = 'UL001';
    END IF;
    RETURN held_epoch;
END
$$;
-- +goose StatementEnd

-- A record of every acquisition of a lease, written in the acquiring
-- transaction: which epoch, which owner, when, and what the row held just
-- before (the previous owner and the instant its lease would have run out;
-- null owner: it had been released). From it alone one can tell whether two
-- owners ever held the lease at once: every acquisition must find the
-- previous owner gone (released) or expired, previous_expires_at <=
-- acquired_at. The fault workload (internal/testing/faulttest) checks exactly that,
-- and matches every stored row's epoch against it.
--
-- It is filled by a row trigger on the acquiring UPDATE rather than by the
-- statement, because the trigger's OLD is the row version the UPDATE really
-- replaced, also when the UPDATE waited on the row's lock and re-checked its
-- condition on a newer version, and because it sees every change of epoch,
-- whoever makes it (an older release, an operator with psql). Renewals and
-- releases do not change the epoch and write nothing here.
CREATE TABLE lease_acquisitions (
    name                text        NOT NULL,
    epoch               bigint      NOT NULL,
    owner               uuid,
    trigger             text,
    acquired_at         timestamptz NOT NULL,
    expires_at          timestamptz,  -- the acquisition's own expiry (renewals extend it)
    previous_owner      uuid,         -- null: the lease had been released
    previous_epoch      bigint      NOT NULL,
    previous_expires_at timestamptz,
    PRIMARY KEY (name, epoch)
);

-- +goose StatementBegin
CREATE FUNCTION upcheck_lease_acquired()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lease_acquisitions (name, epoch, owner, trigger, acquired_at, expires_at,
                                    previous_owner, previous_epoch, previous_expires_at)
    VALUES (NEW.name, NEW.epoch, NEW.owner, NEW.trigger, coalesce(NEW.acquired_at, clock_timestamp()), NEW.expires_at,
            OLD.owner, OLD.epoch, OLD.expires_at);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER core_update_lock_acquired
AFTER UPDATE ON core_update_lock
FOR EACH ROW WHEN (NEW.epoch IS DISTINCT FROM OLD.epoch)
EXECUTE FUNCTION upcheck_lease_acquired();

-- +goose Down
DROP TRIGGER core_update_lock_acquired ON core_update_lock;
DROP FUNCTION upcheck_lease_acquired();
DROP TABLE lease_acquisitions;
DROP FUNCTION upcheck_lease_fence(bigint, text, uuid, text, text, text);
DROP FUNCTION upcheck_lease_begin(bigint, text, text, text);
DROP TABLE core_update_lock;
