-- +goose Up
-- When a pending event will be tried again, as its worker computed it with
-- the backoff: the Notifications page shows it (River keeps its own copy in
-- river_job, which is River's and not indexed by event).
ALTER TABLE notification_events ADD COLUMN next_attempt_at timestamptz;

-- +goose Down
ALTER TABLE notification_events DROP COLUMN next_attempt_at;
