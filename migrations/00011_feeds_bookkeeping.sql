-- +goose Up
-- A feed sync's bookkeeping (the feeds row: its attempt, validators,
-- cursor, last success, last error) no longer moves read_model_version.
-- The version says when the catalog snapshot must be read again
-- (migrations/00006_read_model.sql), and the snapshot reads nothing of
-- feeds: what does read them (the summary's malware_read_at and
-- exploited_read_at, a component's osv_read_at, Source health, /metrics)
-- is read again by age or on each request. A sync that changes an
-- advisory moves the version where it matters: the re-evaluation writes
-- component_results. So a sync that brought nothing new turns no cache.
DROP TRIGGER read_model_changed ON feeds;

-- +goose Down
CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON feeds
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();
