-- +goose Up
-- When may a copy of the read model be reused? (docs/performance.md)
--
-- An instance keeps a snapshot of the catalog in memory. It may reuse it
-- while two things hold: no committed write touched a table the read model
-- reads, and the clock has not passed an instant at which a derived flag
-- turns by itself (a source going stale, a document or a dismissal
-- expiring). The first is read_model_version, bumped by a statement trigger
-- on each such table in the writing transaction, so that a reader sees the
-- bump exactly when it sees the write. The second is
-- upcheck_read_model_turns_at(). A snapshot read in one statement with
-- both is exact; checking them again later costs one row.
CREATE TABLE read_model_version (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    version  bigint  NOT NULL
);
INSERT INTO read_model_version (version) VALUES (0);

-- +goose StatementBegin
CREATE FUNCTION upcheck_read_model_changed()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- Once per transaction: a result write runs a statement per result,
    -- and updating one row again and again in one transaction costs more
    -- each time (every update adds a version the next one walks past). The
    -- flag is transaction-local, so it is gone at commit or rollback.
    IF current_setting('upcheck.read_model_changed', true) = 'on' THEN
        RETURN NULL;
    END IF;
    PERFORM set_config('upcheck.read_model_changed', 'on', true);
    -- Fenced writes already hold the lease's row, so writers of results
    -- queue here in the order they queue there.
    UPDATE read_model_version SET version = version + 1;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON components
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();
CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON sources
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();
CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON component_results
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();
CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON advisory_dismissals
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();
CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON security_problems
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();

-- The age after which a source without a successful fetch is stale: one
-- definition, read by upcheck_stale and by the instant it turns.
-- +goose StatementBegin
CREATE FUNCTION upcheck_stale_age()
RETURNS interval
LANGUAGE sql IMMUTABLE AS $$
    SELECT interval '48 hours'
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION upcheck_stale(last_success_at timestamptz, expires_at timestamptz)
RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT last_success_at IS NULL
        OR last_success_at < clock_timestamp() - upcheck_stale_age()
        OR coalesce(expires_at <= clock_timestamp(), false)
$$;
-- +goose StatementEnd

-- The next instant at which the clock alone may change something the
-- read model derives: a source in use reaching the stale age or its
-- document's expiry (upcheck_stale, for fetched and offline sources
-- alike), or a standing dismissal's expiry (upcheck_dismissal_in_force);
-- null: none is due. Every threshold of the read model is a candidate, and
-- only future ones count: an instant that changes nothing (an offline
-- source is not stale by age) only costs a needless read, one that is
-- missing would keep a snapshot that is no longer true.
-- +goose StatementBegin
CREATE FUNCTION upcheck_read_model_turns_at()
RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT min(t.at)
    FROM (SELECT s.last_success_at + upcheck_stale_age() AS at
            FROM sources s WHERE s.url IN (SELECT c.source_url FROM components c)
          UNION ALL
          SELECT s.expires_at
            FROM sources s WHERE s.url IN (SELECT c.source_url FROM components c)
          UNION ALL
          SELECT d.expires_at
            FROM advisory_dismissals d WHERE d.ended_at IS NULL) t
    WHERE t.at > clock_timestamp()
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION upcheck_read_model_turns_at();
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION upcheck_stale(last_success_at timestamptz, expires_at timestamptz)
RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT last_success_at IS NULL
        OR last_success_at < clock_timestamp() - interval '48 hours'
        OR coalesce(expires_at <= clock_timestamp(), false)
$$;
-- +goose StatementEnd
DROP FUNCTION upcheck_stale_age();
DROP TRIGGER read_model_changed ON security_problems;
DROP TRIGGER read_model_changed ON advisory_dismissals;
DROP TRIGGER read_model_changed ON component_results;
DROP TRIGGER read_model_changed ON sources;
DROP TRIGGER read_model_changed ON components;
DROP FUNCTION upcheck_read_model_changed();
DROP TABLE read_model_version;
