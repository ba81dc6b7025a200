-- +goose Up
-- Who changed what: dismissals, accounts, tokens. A dismissal and its audit
-- row commit together.
CREATE TABLE audit_log (
    id      bigserial   PRIMARY KEY,
    at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    user_id bigint      REFERENCES users (id) ON DELETE SET NULL,
    action  text        NOT NULL,
    detail  jsonb       NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_at ON audit_log (at DESC);

-- +goose Down
DROP TABLE audit_log;
