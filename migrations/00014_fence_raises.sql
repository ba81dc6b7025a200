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
-- EventPlan's question without its insert, for a check's pipelined write
-- (queries/notifications.sql, EventPlanNothingNew): raises UN001
-- (store.ErrEventsToQueue) when an enabled channel may lack an event that
-- the given components call for; the writer then plans in a transaction
-- (EventPlan), which queues exactly the right ones. It is cheap because it
-- reads the stored results alone, not the read model: the keys it makes are
-- a superset of those EventPlan makes (the read model's facts come from the
-- current result, minus dismissed advisories, and are keyed by the same
-- fields), so it may send a write to the transaction for nothing (a
-- dismissed unfixed advisory does, each time), never skip an event. Keep
-- it in step with EventPlan. Without an enabled channel it reads no result.
-- It sees the channels EventPlan would see at that point of the same
-- transaction.
--
-- A function, with a generic plan: as a prepared statement, PostgreSQL
-- re-planned it at every execution (its generic plan's estimate, for an
-- array of unknown length, is above the custom plans'), which cost four
-- times its execution.
CREATE FUNCTION upcheck_nothing_to_queue(codes text[])
RETURNS void
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    missing bigint;
BEGIN
    SELECT count(*) FILTER (WHERE NOT EXISTS (SELECT FROM notification_events e WHERE e.channel_id = ch.id AND e.key = f.key))
    INTO missing
    FROM notification_channels ch
    JOIN (
        SELECT 'security_update.available:' || r.code || '@' || r.security_version AS key, false AS update_only
        FROM component_results r
        WHERE r.code = ANY (codes) AND r.security AND r.security_version IS NOT NULL
        UNION ALL
        SELECT 'advisory.unfixed:' || r.code || '@' || r.installed_version || '/' || id, false
        FROM component_results r
        CROSS JOIN LATERAL unnest(r.no_fix_ids) AS id
        WHERE r.code = ANY (codes)
        UNION ALL
        SELECT 'update.available:' || r.code || '@' || r.update_version, true
        FROM component_results r
        WHERE r.code = ANY (codes) AND r.update_available
    ) f ON ch.events = 'all' OR NOT f.update_only
    WHERE ch.enabled;
    IF missing > 0 THEN
        RAISE EXCEPTION '% notification events to queue', missing USING ERRCODE = 'UN001';
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION upcheck_nothing_to_queue(text[]);
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
