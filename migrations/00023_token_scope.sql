-- +goose Up
-- Least privilege for API tokens: a read-only token has only the view
-- permissions of its owner (internal/auth/permissions.go decides which),
-- whatever the owner's role. Existing tokens keep their full scope.
-- expires_at (00003) already holds a token's end; nothing to add for it.
ALTER TABLE api_tokens ADD COLUMN read_only boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE api_tokens DROP COLUMN read_only;
