-- +goose Up
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
