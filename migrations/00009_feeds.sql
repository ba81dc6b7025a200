-- +goose Up
-- Advisory feeds (docs/feeds.md): OSV records, the KEV catalogue and EPSS
-- scores, synced under the check's lease. Every write here is fenced
-- (epoch), as the check's are.
--
-- The guarantees of a sync, in the tables' terms:
--   - records are stored in batches, each one fenced transaction that also
--     bumps intel_state.version, marks the components the batch affects
--     (intel_marks) and records them as pending (intel_pending);
--   - feeds' cursor, validators and last_success_at move, and the feed's
--     pending components are cleared, only once the sync completed and
--     their re-evaluation was written;
--   - an interrupted sync leaves all three where they were, and its row in
--     feed_syncs says "running" until the next attempt records it as
--     interrupted (feeds.interrupted_at, kept until a sync succeeds).

-- One row per configured feed kind.
CREATE TABLE feeds (
    kind                 text        PRIMARY KEY CHECK (kind IN ('osv', 'osv-api', 'kev', 'epss')),
    url                  text        NOT NULL,
    -- The validators of the last complete download, sent with the next.
    etag                 text,
    last_modified        text,
    -- Where the next sync starts, per kind: osv and osv-api, the newest
    -- "modified" time taken (RFC 3339); kev, the catalogue's version; epss,
    -- the score date. Null: never synced.
    cursor               text,
    last_success_at      timestamptz,
    -- When a sync last changed what is stored (a record written or
    -- deleted, a catalogue replaced).
    last_change_at       timestamptz,
    last_attempt_at      timestamptz,
    last_error           text,
    last_error_kind      text,  -- readmodel.ErrorKind
    last_error_args      jsonb, -- the arguments its sentence needs (readmodel.FailureArgs)
    last_error_at        timestamptz,
    consecutive_failures integer     NOT NULL DEFAULT 0,
    -- The start of a sync that was interrupted (its process died, lost its
    -- lease or its database) before it finished; null once a sync succeeds.
    interrupted_at       timestamptz,
    -- What the feed holds now (OSV records, KEV entries, EPSS scores).
    records              integer     NOT NULL DEFAULT 0,
    -- The records the last sync skipped as malformed: [{id, path, reason}],
    -- at most readmodel.MaxSkippedListed of them, and how many in all.
    skipped              jsonb       NOT NULL DEFAULT '[]',
    skipped_count        integer     NOT NULL DEFAULT 0,
    epoch                bigint      NOT NULL
);

-- The history of feed syncs: a row is written "running" when a sync starts
-- and ends with its outcome; a row still "running" when the next sync of
-- its feed starts was interrupted, and is recorded so then.
CREATE TABLE feed_syncs (
    id          bigserial   PRIMARY KEY,
    kind        text        NOT NULL,
    trigger     text        NOT NULL, -- check, cli, import
    started_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at timestamptz,
    status      text        NOT NULL CHECK (status IN ('running', 'completed', 'not_modified', 'failed', 'interrupted')),
    -- Records written, unchanged and skipped as malformed.
    written     integer     NOT NULL DEFAULT 0,
    unchanged   integer     NOT NULL DEFAULT 0,
    skipped     integer     NOT NULL DEFAULT 0,
    error       text,
    epoch       bigint      NOT NULL
);
CREATE INDEX feed_syncs_kind ON feed_syncs (kind, id DESC);

-- OSV records, each as it was received (record: the exact bytes, hash their
-- sha256), with what matching and merging read without decoding it.
CREATE TABLE osv_records (
    id         text        PRIMARY KEY,
    hash       bytea       NOT NULL,
    record     bytea       NOT NULL,
    modified   timestamptz NOT NULL,
    withdrawn  timestamptz,
    -- Upper-cased ids and aliases (as upcheck_advisory_keys spells them),
    -- for KEV and EPSS, which name CVEs.
    keys       text[]      NOT NULL,
    malicious  boolean     NOT NULL,
    -- Which feed brought it (osv or osv-api).
    feed       text        NOT NULL,
    stored_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    epoch      bigint      NOT NULL
);

-- The packages each record names in affected[]: how a component (its
-- ecosystem and package) finds its records. Only the rows that differ are
-- deleted or inserted when a record changes.
CREATE TABLE osv_packages (
    id        text NOT NULL REFERENCES osv_records (id) ON DELETE CASCADE,
    ecosystem text NOT NULL,
    name      text NOT NULL,
    PRIMARY KEY (id, ecosystem, name)
);
CREATE INDEX osv_packages_name ON osv_packages (ecosystem, name);

-- The KEV catalogue, replaced whole by each sync that brings a new one.
CREATE TABLE kev_entries (
    cve             text PRIMARY KEY, -- upper case
    vendor          text NOT NULL,
    product         text NOT NULL,
    name            text NOT NULL,
    date_added      date NOT NULL,
    due_date        date,
    required_action text NOT NULL,
    ransomware      text NOT NULL, -- knownRansomwareCampaignUse: "Known" or "Unknown"
    epoch           bigint NOT NULL
);

-- EPSS scores by CVE; a sync writes only the scores that changed.
CREATE TABLE epss_scores (
    cve        text PRIMARY KEY, -- upper case
    epss       real NOT NULL,
    percentile real NOT NULL
);

-- The version of what the feeds stored: bumped by every transaction that
-- changes a record, the KEV catalogue or a score.
CREATE TABLE intel_state (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    version  bigint  NOT NULL
);
INSERT INTO intel_state (version) VALUES (0);

-- For each component a feed change affected, the version of the last such
-- change: a result evaluated with an older version of the feeds is refused
-- (queries/component_results.sql ResultWrite), so a manifest sync that read
-- the advisories before a batch cannot overwrite the batch's re-evaluation.
CREATE TABLE intel_marks (
    code    text   PRIMARY KEY,
    version bigint NOT NULL
);

-- The components a feed's sync must still re-evaluate: recorded in the
-- batch that affected them, cleared when that feed's sync completes.
CREATE TABLE intel_pending (
    feed text NOT NULL,
    code text NOT NULL,
    PRIMARY KEY (feed, code)
);

-- The age after which a feed without a successful sync is stale: two
-- daily syncs missed (readmodel.FeedStaleAge, its Go twin).
-- +goose StatementBegin
CREATE FUNCTION upcheck_feed_stale_age()
RETURNS interval
LANGUAGE sql IMMUTABLE AS $$
    SELECT interval '48 hours'
$$;
-- +goose StatementEnd

-- Whether a sync recorded as running is dead: the lease it ran under (its
-- epoch) is no longer held by anyone (expired, released, or taken over by
-- a later epoch): its process died, or lost its lease or its database,
-- before it finished. The one definition; the next sync records such a
-- sync as interrupted, and until then the read model says so.
-- +goose StatementBegin
CREATE FUNCTION upcheck_feed_sync_dead(epoch bigint)
RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT NOT EXISTS (SELECT 1 FROM core_update_lock l
                       WHERE l.name = 'check' AND l.epoch = upcheck_feed_sync_dead.epoch
                         AND l.owner IS NOT NULL AND l.expires_at > clock_timestamp())
$$;
-- +goose StatementEnd

-- When an advisory feed that can name malicious packages (osv and osv-api:
-- readmodel.FeedKind.NamesMalware, its Go twin) last completed a sync;
-- null: none ever did, so nothing is known of malicious packages and no
-- count of them may be given (the summary's malicious is null then). The
-- one definition of "the advisory feeds were read".
-- +goose StatementBegin
CREATE FUNCTION upcheck_malware_read_at()
RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT max(f.last_success_at) FROM feeds f WHERE f.kind IN ('osv', 'osv-api')
$$;
-- +goose StatementEnd

-- When a feed that can say an advisory is exploited in the wild (kev, the
-- KEV catalogue: readmodel.FeedKind.NamesExploited, its Go twin) last
-- completed a sync; null: none ever did, so nothing is known of exploited
-- advisories and no count of them may be given (the summary's
-- known_exploited is null then). The one definition of "the KEV catalogue
-- was read".
-- +goose StatementBegin
CREATE FUNCTION upcheck_exploited_read_at()
RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT max(f.last_success_at) FROM feeds f WHERE f.kind = 'kev'
$$;
-- +goose StatementEnd

-- Every configured feed with its derived facts: stale (no success for the
-- stale age since it last succeeded or, never, since it was configured:
-- its first sync row), failing (upcheck_failing, as for sources), and
-- interrupted_since: the start of a sync interrupted before it finished,
-- recorded (interrupted_at) or not yet (a sync still "running" whose lease
-- is gone), until a sync succeeds.
CREATE VIEW feed_state AS
SELECT f.*,
       coalesce(coalesce(f.last_success_at,
                         (SELECT min(s.started_at) FROM feed_syncs s WHERE s.kind = f.kind))
                < clock_timestamp() - upcheck_feed_stale_age(), false)::boolean AS stale,
       upcheck_failing(f.last_error) AS failing,
       coalesce(f.interrupted_at,
                (SELECT min(s.started_at) FROM feed_syncs s
                 WHERE s.kind = f.kind AND s.status = 'running' AND upcheck_feed_sync_dead(s.epoch))) AS interrupted_since
FROM feeds f;

CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON feeds
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();

-- +goose Down
DROP TRIGGER read_model_changed ON feeds;
DROP VIEW feed_state;
DROP FUNCTION upcheck_exploited_read_at();
DROP FUNCTION upcheck_malware_read_at();
DROP FUNCTION upcheck_feed_sync_dead(bigint);
DROP FUNCTION upcheck_feed_stale_age();
DROP TABLE intel_pending;
DROP TABLE intel_marks;
DROP TABLE intel_state;
DROP TABLE epss_scores;
DROP TABLE kev_entries;
DROP TABLE osv_packages;
DROP TABLE osv_records;
DROP TABLE feed_syncs;
DROP TABLE feeds;
