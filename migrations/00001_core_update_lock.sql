-- +goose Up
-- The single lease that makes update checks exclusive across instances.
-- See internal/lease/doc.go for the model; the names here are part of the
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

-- +goose Down
DROP TABLE core_update_lock;
