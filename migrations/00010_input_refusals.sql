-- +goose Up
-- The site's own inputs (the manifest, UPCHECK_MANIFEST, or the lockfile,
-- UPCHECK_LOCKFILE) that serve read and refused: the installed components
-- stay as the last accepted input left them, and the operator is told so on
-- the dashboard, in the summary and in /metrics, not only in the log. One
-- row per input while it is refused; the row goes when the input is
-- accepted again.
CREATE TABLE input_refusals (
    input            text        PRIMARY KEY CHECK (input IN ('manifest', 'lockfile')),
    path             text        NOT NULL CHECK (length(path) <= 4096),
    -- The refusal in words: the file, the line and the problem, never a
    -- value read from it (a token in .npmrc stays out of every message).
    error            text        NOT NULL CHECK (length(error) <= 2000),
    -- Since when the input has been refused with this error, and when it
    -- last was (every look at the file while it stays refused).
    since            timestamptz NOT NULL,
    refused_at       timestamptz NOT NULL
);

-- +goose Down
DROP TABLE input_refusals;
