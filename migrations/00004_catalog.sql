-- +goose Up
-- The catalog: installed components, their update sources and what
-- evaluation derived from each source's stored document.
--
-- Fetch facts (last success, last error, failures, validators, expiry) live
-- on sources alone and change only when a source is fetched. A result holds
-- only what evaluation derives, plus the inputs it was derived from: the
-- installed version, the core's installed version, the stored document
-- (by hash) and the key that document was verified with. A result counts
-- only while those inputs are the current ones (component_state), and a
-- write evaluated from other inputs is refused (queries/component_results.sql).

-- Installed components (the core and each plugin), loaded from the manifest.
CREATE TABLE components (
    code              text        PRIMARY KEY,
    name              text        NOT NULL,
    installed_version text        NOT NULL,
    -- The update source; null for a component nobody publishes updates for.
    source_url        text,
    -- The publisher key pinned for the source, "ed25519:BASE64"; null: unsigned.
    pinned_key        text,
    -- The npm package the component is, for matching advisories of the
    -- npm ecosystem (docs/feeds.md): the package of an npm source
    -- ("npm:NAME"), or the manifest's "package" for another kind; null:
    -- none, and no feed's advisory can match it.
    package           text,
    -- What the component may be offered and when (docs/policy.md): the
    -- manifest's site-wide policy overridden by the component's own, as
    -- updatedoc.Policy.Text writes it; null: every release at once. An
    -- input of evaluation, like the installed version.
    policy            text,
    -- Its first appearance in the table: when it was installed (upcheck_stale).
    created_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at        timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX components_source_url ON components (source_url);
CREATE INDEX components_package ON components (package) WHERE package IS NOT NULL;

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
    epoch                bigint      NOT NULL,
    -- sha256 of document.
    document_hash        bytea,
    -- Set by the clean-up while no component uses the source; the row (and
    -- with it the rollback state) is deleted 30 days later.
    unused_since         timestamptz,
    -- When the source's current run of failures began (its first failure
    -- after a success, or its first attempt): a source.failing event is keyed
    -- by it, so one episode notifies once. Null while the source succeeds.
    failing_since        timestamptz,
    -- The last failure as a stable kind (readmodel.ErrorKind: the pages word
    -- it) and the arguments its sentence needs (readmodel.FailureArgs: an HTTP
    -- status, an address, a position in the document, two sequences), worded
    -- when read; last_error keeps the technical text, shown behind it.
    last_error_kind      text,
    last_error_args      jsonb,
    -- The short forms of the keys that verified the stored document
    -- ("ab12cd34…ef01", space separated); null when unsigned. For an npm
    -- source, the ids of the registry keys its versions were verified with.
    verified_by          text,
    -- An npm source ("npm:NAME"): the registry's URL it was read from,
    -- never with credentials; null for other kinds.
    registry             text
);

-- Rollback protection: the highest sequence accepted per source and key
-- ('' for unsigned), kept across key changes so that returning to an earlier
-- key does not let an older document back in.
CREATE TABLE source_sequences (
    url      text        NOT NULL REFERENCES sources (url) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    key      text        NOT NULL,
    sequence bigint      NOT NULL,
    seen_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    epoch    bigint      NOT NULL,
    PRIMARY KEY (url, key)
);

-- The keys a source is trusted under, when a key statement changed them
-- (docs/update-document.md "Rotating keys"). The manifest's pin
-- (components.pinned_key) stays the root of trust: a row applies only
-- while its pin is the pin of the source's components; when the manifest
-- pins something else, the pin's own keys are trusted again. Written only
-- in the check's fenced writes, with the source's row.
CREATE TABLE source_trust (
    url                 text        PRIMARY KEY REFERENCES sources (url) ON DELETE CASCADE,
    pin                 text        NOT NULL, -- the pin the row belongs to (canonical text)
    keys                text,                 -- the endorsed set (canonical text); null: the pin's own
    version             bigint      NOT NULL DEFAULT 0, -- the last statement accepted under the pin
    statement           bytea,                -- its exact body
    statement_signature text,                 -- and its signature set
    changed_at          timestamptz,          -- when keys last changed
    checked_at          timestamptz,          -- when the statement was last fetched
    epoch               bigint      NOT NULL
);

-- The signing keys of each npm registry, pinned on first sight
-- (docs/npm.md "Trust"): a registry that publishes other keys later is a
-- trust event (audit log, source health, notification registry_keys.changed)
-- and its new keys are pinned in their turn. Written only in the check's
-- fenced writes, with the row of the first of its sources written.
CREATE TABLE registry_keys (
    registry      text        PRIMARY KEY, -- the registry's URL, no credentials
    keys          jsonb       NOT NULL,    -- the keys as the registry publishes them
    key_ids       text[]      NOT NULL,    -- their ids, sorted
    first_seen_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- When the keys last changed after first sight; null: never.
    changed_at    timestamptz,
    epoch         bigint      NOT NULL
);

-- The catalog finds a component by the id or an alias (a CVE or GHSA id)
-- of an advisory affecting its installed version: the advisories of its
-- current result (component_results.advisories, every advisory affecting
-- the installed version, dismissed or not; a withdrawn advisory is not
-- among them). upcheck_advisory_keys is the one definition of what such a
-- search matches: each advisory's id and aliases, upper-cased, so that
-- "cve-2021-44228" and "GHSA-JFH8-C2JP-5V3Q" find them too. The keys are
-- kept beside the advisories (a generated column, computed when a result
-- is written), so the catalog's snapshot (queries/catalog.sql CatalogAll)
-- reads them without decoding any JSON.
--
-- PL/pgSQL, not SQL: the column is computed by every statement that writes
-- a result (one a result), and a SQL function whose body cannot be inlined
-- is planned again by each statement that calls it, where PL/pgSQL keeps
-- its plan for the session. In a manifest sync of 10,000 components that
-- was the difference between 1.8 s and 3.5 s (docs/performance.md).
-- +goose StatementBegin
CREATE FUNCTION upcheck_advisory_keys(advisories jsonb)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    RETURN (
        SELECT coalesce(array_agg(DISTINCT upper(k.key) ORDER BY upper(k.key)), '{}')
        FROM jsonb_array_elements(CASE jsonb_typeof(advisories) WHEN 'array' THEN advisories ELSE '[]' END) AS a(adv)
        CROSS JOIN LATERAL (
            SELECT a.adv->>'id'
            UNION ALL
            SELECT jsonb_array_elements_text(CASE jsonb_typeof(a.adv->'aliases') WHEN 'array' THEN a.adv->'aliases' ELSE '[]' END)
        ) AS k(key)
        WHERE k.key IS NOT NULL);
END
$$;
-- +goose StatementEnd

-- The evaluation of each component against its source's stored document.
-- Dismissals are not an input of evaluation: a result lists every advisory
-- that affects the installed version, and the read model leaves out the
-- dismissed ones when it reads, so a dismissal shows at once and no write
-- can undo it.
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
    advisories        jsonb       NOT NULL DEFAULT '[]',
    evaluation        jsonb,                -- the whole evaluation, for the detail page
    release_url       text,
    evaluated_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    epoch             bigint      NOT NULL,
    -- The core's installed version when this row was evaluated (for the core
    -- itself, its own version).
    core_version      text        NOT NULL,
    -- sha256 of the stored document evaluated (sources.document_hash).
    document_hash     bytea       NOT NULL,
    -- The pinned key the document was verified with; null: unsigned.
    verified_key      text,
    -- Why the component could not be evaluated from the document (its
    -- package is missing, a version does not parse); null when it was.
    eval_error        text,
    -- The ids of the advisories affecting installed_version, and of those
    -- with no fixed version: the read model compares them with the
    -- dismissals without reading the JSON.
    advisory_ids      text[]      NOT NULL DEFAULT '{}',
    no_fix_ids        text[]      NOT NULL DEFAULT '{}',
    -- The newest security release newer than the installed version
    -- (installable or not): a security_update.available event is keyed by it.
    security_version  text,
    -- Every security release newer than the installed version: a newer
    -- security release does not restart the exposure clock of a component
    -- whose older fix is still not installed.
    security_versions text[]      NOT NULL DEFAULT '{}',
    advisory_keys     text[]      NOT NULL GENERATED ALWAYS AS (upcheck_advisory_keys(advisories)) STORED,
    -- npm sources: the publisher's deprecation message of the installed
    -- version (null: not deprecated), the newest offered version when it
    -- lost the provenance the installed version has (null: none), and what
    -- the registry said (readmodel.RegistryFacts) for the detail page.
    deprecated        text,
    provenance_lost   text,
    registry_facts    jsonb,
    -- Advisory feeds (docs/feeds.md): the version of the feeds' stored
    -- advisories this row was evaluated with (intel_state.version; a write
    -- evaluated with an older version than a change that affects the
    -- component is refused, intel_marks), and the ids of the advisories
    -- affecting installed_version that are known exploited (KEV) or that
    -- say the package is malicious, compared with the dismissals as
    -- advisory_ids are.
    intel_version     bigint      NOT NULL DEFAULT 0,
    exploited_ids     text[]      NOT NULL DEFAULT '{}',
    malicious_ids     text[]      NOT NULL DEFAULT '{}',
    -- The advisories (ids) that a release the policy's hold allows clears
    -- (release.Evaluation.FixIDs): while one is open the component has a
    -- security update, whoever marked the release (security is the
    -- publisher's mark alone); and the oldest release the policy offers
    -- and the installed core runs that clears every one of them (null:
    -- none), the smallest way out (docs/policy.md).
    fix_ids           text[]      NOT NULL DEFAULT '{}',
    fix_version       text,
    -- The policy (components.policy) and the skipped version
    -- (component_skips.version) this row was evaluated under: inputs, as
    -- installed_version is. Then what the policy held back
    -- (release.Evaluation): the newest release waiting for its soak and
    -- when it soaks, the newest one the policy does not offer and why, and
    -- when a waiting release soaks next, when the row is evaluated again
    -- (null: no release waits with a date). Why is a kind and its
    -- arguments (release.Reason's JSON, {"kind": "held", "hold":
    -- "<3.0.0"}), worded when read (readmodel.OfferReasonText).
    policy            text,
    skipped_version   text,
    waiting_version   text,
    waiting_until     timestamptz,
    held_version      text,
    held_reason       jsonb CHECK (jsonb_typeof(held_reason->'kind') = 'string'),
    next_change_at    timestamptz,
    -- npm sources: the offered version when it was published by an
    -- account (_npmUser) that published none of the package's earlier
    -- versions, and that account (null: none).
    new_publisher_version text,
    new_publisher     text
);
-- The re-evaluation of results whose offer changes with time.
CREATE INDEX component_results_next_change_at ON component_results (next_change_at) WHERE next_change_at IS NOT NULL;

-- A skipped version (docs/policy.md "Skip a version"): a plain release at
-- or below it is not offered to the component; a newer one is, as usual.
-- One per component; unskipping deletes the row, and the audit log keeps
-- both. A skip declared in the manifest (from_manifest) is written by the
-- manifest sync alone and cannot be undone in the AdminCP. No foreign
-- key: as a dismissal, a skip outlives its component leaving the manifest
-- for a while.
CREATE TABLE component_skips (
    code          text        PRIMARY KEY,
    version       text        NOT NULL,
    reason        text        NOT NULL,
    -- Who, as they were called (a user's email, "manifest").
    actor         text        NOT NULL,
    user_id       bigint      REFERENCES users (id) ON DELETE SET NULL,
    from_manifest boolean     NOT NULL DEFAULT false,
    skipped_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT component_skips_reason CHECK (btrim(reason, E' \t\r\n') <> '' AND char_length(reason) <= 500)
);

-- A manifest sync that lowered the trust of a source (docs/policy.md
-- "Trust going down"): the threshold of its pinned keys went down, or
-- keys it pinned are no longer pinned. One row per component, the last
-- such change; it shows while the component still pins what it pinned
-- after the change and for upcheck_pin_downgrade_shown (the read model).
CREATE TABLE pin_downgrades (
    code          text        PRIMARY KEY,
    source_url    text        NOT NULL,
    -- The pin after the change (components.pinned_key, '' for none).
    pin           text        NOT NULL,
    reason        text        NOT NULL,
    changed_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);

COMMENT ON COLUMN component_results.advisories IS
    'every advisory affecting installed_version, dismissed or not';

-- The exposure clock: since when this site has known of each security
-- problem of a component, so that the pages can say "security fix
-- available for 3 days" and /metrics can export the oldest one.
--
-- A problem is an advisory affecting the installed version (by id) or a
-- security release newer than it (by version). The result write records
-- the problems of each result it writes, in the same statement
-- (queries/component_results.sql): a problem new to the component is
-- stamped with the write's time, one it already had keeps its stamp, and
-- one the result no longer has is forgotten, so a problem that goes away
-- and comes back starts again. Dismissals are not applied here but when
-- read (component_exposure), as for every other flag: a dismissed advisory
-- does not count, and a restored one counts from when it was first seen.
-- Deleted with the component's result (a component removed, or its source
-- changed).
CREATE TABLE security_problems (
    code          text        NOT NULL REFERENCES component_results (code) ON DELETE CASCADE,
    kind          text        NOT NULL CHECK (kind IN ('advisory', 'release')),
    -- The advisory's id, or the security release's version.
    problem       text        NOT NULL,
    first_seen_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (code, kind, problem)
);


-- +goose Down
DROP TABLE pin_downgrades;
DROP TABLE component_skips;
DROP TABLE security_problems;
DROP TABLE component_results;
DROP FUNCTION upcheck_advisory_keys(jsonb);
DROP TABLE registry_keys;
DROP TABLE source_trust;
DROP TABLE source_sequences;
DROP TABLE sources;
DROP TABLE components;
