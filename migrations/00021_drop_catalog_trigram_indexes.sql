-- +goose Up
-- The catalog searches its in-memory snapshot (store.CatalogSnapshot), so
-- the trigram indexes of 00015 serve no query any more; each write of a
-- component kept them up to date for nothing. The extension stays: it is
-- harmless, and dropping it would need more than the owner's rights on
-- some installations.
DROP INDEX components_name_trgm;
DROP INDEX components_code_trgm;

-- +goose Down
CREATE INDEX components_name_trgm ON components USING gin (name gin_trgm_ops);
CREATE INDEX components_code_trgm ON components USING gin (code gin_trgm_ops);
