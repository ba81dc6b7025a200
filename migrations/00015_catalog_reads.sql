-- +goose Up
-- The catalog at 10,000 components (docs/performance.md).
--
-- Search: the catalog matches a substring of the code or the name, case
-- insensitively (ILIKE '%q%'); trigram indexes let such a search read the
-- matching components only. pg_trgm ships with PostgreSQL (contrib) and is
-- a trusted extension: the database's owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX components_name_trgm ON components USING gin (name gin_trgm_ops);
CREATE INDEX components_code_trgm ON components USING gin (code gin_trgm_ops);

-- The catalog's order, in one place: what needs action first (a security
-- update or a vulnerable version), then an update, then a check that
-- fails, is stale or has not evaluated the component yet, then up to date,
-- then components without an update source. Its arguments are
-- component_state's flags; the page and its keyset cursor (after) both
-- read this rank, then lower(name), then code.
-- +goose StatementBegin
CREATE FUNCTION upcheck_catalog_rank(security boolean, vulnerable boolean, update_available boolean,
                                     source_url text, failing boolean, stale boolean, evaluated boolean)
RETURNS integer
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN security OR vulnerable THEN 0
                WHEN update_available THEN 1
                WHEN source_url IS NULL THEN 4
                WHEN failing OR stale OR NOT evaluated THEN 2
                ELSE 3 END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION upcheck_catalog_rank(boolean, boolean, boolean, text, boolean, boolean, boolean);
DROP INDEX components_code_trgm;
DROP INDEX components_name_trgm;
