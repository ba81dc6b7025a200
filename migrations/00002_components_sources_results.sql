-- +goose Up

-- Installed components (the core and each plugin), loaded from the manifest.
CREATE TABLE components (
    code              text        PRIMARY KEY,
    name              text        NOT NULL,
    installed_version text        NOT NULL,
    -- The update source; null for a component nobody publishes updates for.
    source_url        text,
    -- The publisher key pinned for the source, "ed25519:BASE64"; null: unsigned.
    pinned_key        text,
    created_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at        timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX components_source_url ON components (source_url);

-- One row per update source URL: its last valid document and its health.
-- Written only by fenced transactions of the check holding the lease (epoch).
CREATE TABLE sources (
    url                  text        PRIMARY KEY,
    document             bytea,       -- the exact body of the last valid document
    signature            text,        -- its detached signature, when signed
    sequence             bigint,      -- the document's sequence
    -- The pinned key the stored sequence was accepted under; when the
    -- component's pinned key changes, the stored sequence no longer applies.
    sequence_key         text,
    etag                 text,
    last_modified        text,
    expires_at           timestamptz, -- the document's own expiry
    fetched_at           timestamptz, -- when the stored document was received
    last_success_at      timestamptz,
    last_attempt_at      timestamptz,
    last_error           text,
    last_error_at        timestamptz,
    consecutive_failures integer     NOT NULL DEFAULT 0,
    signature_state      text        NOT NULL DEFAULT 'unsigned'
        CHECK (signature_state IN ('unsigned', 'verified')),
    epoch                bigint      NOT NULL
);

-- The evaluation of each component against its source's stored document.
CREATE TABLE component_results (
    code              text        PRIMARY KEY,
    source_url        text,
    installed_version text        NOT NULL, -- the version this row was evaluated for
    latest_version    text,
    update_version    text,
    update_available  boolean     NOT NULL DEFAULT false,
    security          boolean     NOT NULL DEFAULT false,
    needs_newer_core  boolean     NOT NULL DEFAULT false,
    required_core     text,
    vulnerable        boolean     NOT NULL DEFAULT false,
    advisories        jsonb       NOT NULL DEFAULT '[]',
    evaluation        jsonb,                -- the whole evaluation, for the detail page
    release_url       text,
    stale             boolean     NOT NULL DEFAULT false,
    last_success_at   timestamptz,
    last_error        text,
    last_error_at     timestamptz,
    evaluated_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    epoch             bigint      NOT NULL
);

-- Every check, refused ones too.
CREATE TABLE check_runs (
    id                    bigserial   PRIMARY KEY,
    trigger               text        NOT NULL,
    actor                 text,       -- the user, "cron", or "cli"
    owner                 uuid,       -- the lease owner, for acquired runs
    epoch                 bigint,
    started_at            timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at           timestamptz,
    status                text        NOT NULL
        CHECK (status IN ('running', 'completed', 'busy', 'cooldown', 'skipped', 'lease_lost', 'cancelled', 'failed')),
    sources_fetched       integer     NOT NULL DEFAULT 0,
    sources_not_modified  integer     NOT NULL DEFAULT 0,
    sources_failed        integer     NOT NULL DEFAULT 0,
    sources_skipped       integer     NOT NULL DEFAULT 0,
    duration_ms           bigint,
    error                 text
);
CREATE INDEX check_runs_started_at ON check_runs (started_at DESC);

-- Small settings that belong to the installation, not to one process.
CREATE TABLE app_settings (
    key   text PRIMARY KEY,
    value text NOT NULL
);

-- +goose Down
DROP TABLE app_settings;
DROP TABLE check_runs;
DROP TABLE component_results;
DROP TABLE sources;
DROP TABLE components;
