-- name: FeedBegin :one
-- Starts a sync of one feed (fenced, in the caller's transaction): the
-- feed's row is created or takes the configured URL, a sync of it still
-- "running" is recorded as interrupted (its process died or lost its lease
-- or database before it finished) and its start kept on the feed until a
-- sync succeeds, and this sync is recorded as running. Returns the new
-- sync's id and the start of the interrupted one (null: none).
WITH interrupted AS (
    UPDATE feed_syncs
    SET status = 'interrupted', finished_at = clock_timestamp()
    WHERE kind = @kind::text AND status = 'running'
    RETURNING started_at
),
feed AS (
    INSERT INTO feeds (kind, url, epoch, last_attempt_at)
    VALUES (@kind::text, @url::text, @epoch::bigint, clock_timestamp())
    ON CONFLICT (kind) DO UPDATE
    SET url = EXCLUDED.url, epoch = EXCLUDED.epoch, last_attempt_at = EXCLUDED.last_attempt_at,
        interrupted_at = coalesce(feeds.interrupted_at, (SELECT min(started_at) FROM interrupted)),
        last_error = CASE WHEN EXISTS (SELECT 1 FROM interrupted)
                          THEN 'the sync started ' || to_char((SELECT min(started_at) FROM interrupted) AT TIME ZONE 'UTC',
                                                              'YYYY-MM-DD HH24:MI:SS') || ' UTC was interrupted before it finished'
                          ELSE feeds.last_error END,
        last_error_kind = CASE WHEN EXISTS (SELECT 1 FROM interrupted) THEN 'interrupted' ELSE feeds.last_error_kind END,
        last_error_args = CASE WHEN EXISTS (SELECT 1 FROM interrupted)
                               THEN jsonb_build_object('started_at', to_char((SELECT min(started_at) FROM interrupted) AT TIME ZONE 'UTC',
                                                                             'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
                               ELSE feeds.last_error_args END,
        last_error_at = CASE WHEN EXISTS (SELECT 1 FROM interrupted) THEN clock_timestamp() ELSE feeds.last_error_at END
    RETURNING kind
)
INSERT INTO feed_syncs (kind, trigger, status, epoch)
SELECT f.kind, @trigger::text, 'running', @epoch::bigint FROM feed f
-- (in a CASE because sqlc takes a subquery's cast for never null)
RETURNING id, CASE WHEN true THEN (SELECT min(started_at) FROM interrupted) END AS interrupted_started_at;

-- name: FeedGet :one
-- Where the feed's next sync starts.
SELECT kind, url, etag, last_modified, cursor
FROM feeds WHERE kind = @kind::text;

-- name: FeedComplete :exec
-- Ends a sync that completed: the cursor, the validators and the last
-- success move, the feed's pending components are cleared (their
-- re-evaluation was written before), and the sync row records the outcome.
WITH cleared AS (
    DELETE FROM intel_pending WHERE feed = @kind::text
),
run AS (
    UPDATE feed_syncs
    SET status = @status::text, finished_at = clock_timestamp(),
        written = @written::integer, unchanged = @unchanged::integer, skipped = @skipped_count::integer
    WHERE id = @sync_id::bigint
)
UPDATE feeds
SET etag = sqlc.narg(etag)::text, last_modified = sqlc.narg(last_modified)::text, cursor = sqlc.narg(cursor)::text,
    last_success_at = clock_timestamp(),
    last_change_at = CASE WHEN @changed::boolean THEN clock_timestamp() ELSE last_change_at END,
    last_error = NULL, last_error_kind = NULL, last_error_args = NULL, last_error_at = NULL,
    consecutive_failures = 0, interrupted_at = NULL,
    records = CASE WHEN @records::integer >= 0 THEN @records::integer ELSE records END,
    -- a sync that read nothing new keeps the list of the one that did
    skipped = CASE WHEN @status::text = 'not_modified' THEN skipped ELSE @skipped::jsonb END,
    skipped_count = CASE WHEN @status::text = 'not_modified' THEN skipped_count ELSE @skipped_count::integer END,
    epoch = @epoch::bigint
WHERE kind = @kind::text;

-- name: FeedFail :exec
-- Ends a sync that failed: the error is recorded; the cursor, the
-- validators, the last success and the pending components stay, so the
-- next sync starts where this one did. A refused import (on_feed false:
-- a file brought by hand that could not be read) is recorded in the
-- history only: the feed's server did not fail, and the feed's state
-- (its last error, its failures, its skipped records) stays.
WITH run AS (
    UPDATE feed_syncs
    SET status = 'failed', finished_at = clock_timestamp(), error = @error::text,
        written = @written::integer, skipped = @skipped_count::integer
    WHERE id = @sync_id::bigint
)
UPDATE feeds
SET last_error = @error::text, last_error_kind = @error_kind::text, last_error_args = sqlc.narg(error_args)::jsonb,
    last_error_at = clock_timestamp(), consecutive_failures = consecutive_failures + 1,
    skipped = CASE WHEN @skipped_count::integer > 0 THEN @skipped::jsonb ELSE skipped END,
    skipped_count = CASE WHEN @skipped_count::integer > 0 THEN @skipped_count::integer ELSE skipped_count END,
    epoch = @epoch::bigint
WHERE kind = @kind::text AND @on_feed::boolean;

-- name: FeedsDue :many
-- The configured kinds whose last success is older than the period (or
-- that never succeeded), on the database clock, and those a sync left
-- unfinished (components still pending, a sync still "running": it was
-- interrupted), which the next check finishes, and an API feed since whose
-- last success a component took another version or the tree changed.
SELECT k.kind::text AS kind
FROM unnest(@kinds::text[]) AS k(kind)
LEFT JOIN feeds f ON f.kind = k.kind
WHERE f.last_success_at IS NULL OR f.last_success_at <= clock_timestamp() - @period::interval
   OR EXISTS (SELECT 1 FROM intel_pending p WHERE p.feed = k.kind)
   OR EXISTS (SELECT 1 FROM feed_syncs s WHERE s.kind = k.kind AND s.status = 'running')
   -- an API is asked of the installed versions: one installed since is due
   OR (k.kind = 'osv-api' AND EXISTS (SELECT 1 FROM components c
                                      WHERE c.package IS NOT NULL AND c.updated_at > f.last_success_at))
   -- and so is one since whose last success the installed tree changed
   OR (k.kind = 'osv-api' AND EXISTS (SELECT 1 FROM tree_state t WHERE t.changed_at > f.last_success_at));

-- name: FeedList :many
-- Every feed with its derived facts, for Source health and the API.
SELECT kind, url, records, last_success_at, last_change_at, last_attempt_at, last_error, last_error_kind,
       last_error_args, consecutive_failures, interrupted_since AS interrupted_at, skipped, skipped_count, stale, failing
FROM feed_state
ORDER BY array_position(ARRAY['osv', 'osv-api', 'kev', 'epss'], kind);

-- name: FeedSyncList :many
-- The latest syncs, newest first, for the history; one recorded as running
-- whose lease is gone reads as interrupted (upcheck_feed_sync_dead).
SELECT id, kind, trigger, started_at, finished_at,
       (CASE WHEN status = 'running' AND upcheck_feed_sync_dead(epoch) THEN 'interrupted' ELSE status END)::text AS status,
       written, unchanged, skipped, error
FROM feed_syncs
ORDER BY id DESC
LIMIT @max_rows::integer;

-- name: OSVStoredHashes :many
-- The stored hashes of the records with these ids: a record whose bytes
-- hash the same is unchanged and is not read again.
SELECT id, hash FROM osv_records WHERE id = ANY(@ids::text[]);

-- name: OSVRecordUpsert :batchone
-- Writes one record, when its bytes differ from the stored ones and it is
-- not older than the stored one (an old file imported by hand does not
-- take a record back); no row comes back when nothing was written.
INSERT INTO osv_records (id, hash, record, modified, withdrawn, keys, malicious, feed, epoch)
VALUES (@id::text, @hash::bytea, @record::bytea, @modified::timestamptz, sqlc.narg(withdrawn)::timestamptz,
        @keys::text[], @malicious::boolean, @feed::text, @epoch::bigint)
ON CONFLICT (id) DO UPDATE
SET hash = EXCLUDED.hash, record = EXCLUDED.record, modified = EXCLUDED.modified, withdrawn = EXCLUDED.withdrawn,
    keys = EXCLUDED.keys, malicious = EXCLUDED.malicious, feed = EXCLUDED.feed, stored_at = clock_timestamp(),
    epoch = EXCLUDED.epoch
WHERE osv_records.hash <> EXCLUDED.hash AND EXCLUDED.modified >= osv_records.modified
RETURNING id;

-- name: OSVPackagesSync :many
-- Brings the package rows of the given records to the given set, deleting
-- and inserting only the rows that differ, and returns the names of the
-- packages of rows deleted or inserted, and of every package of the
-- records (a changed record's advisory may change for every package it
-- names).
WITH wanted AS (
    SELECT unnest(@ids::text[]) AS id, unnest(@ecosystems::text[]) AS ecosystem, unnest(@names::text[]) AS name
),
gone AS (
    DELETE FROM osv_packages p
    WHERE p.id = ANY(@record_ids::text[])
      AND NOT EXISTS (SELECT 1 FROM wanted w WHERE w.id = p.id AND w.ecosystem = p.ecosystem AND w.name = p.name)
    RETURNING p.ecosystem, p.name
),
added AS (
    INSERT INTO osv_packages (id, ecosystem, name)
    SELECT id, ecosystem, name FROM wanted
    ON CONFLICT DO NOTHING
    RETURNING ecosystem, name
)
SELECT DISTINCT x.ecosystem::text AS ecosystem, x.name::text AS name
FROM (SELECT ecosystem, name FROM gone UNION ALL SELECT ecosystem, name FROM added
      UNION ALL SELECT ecosystem, name FROM wanted) x;

-- name: IntelBump :one
-- A feed changed what is stored: the version of the feeds' advisories
-- moves, in the changing transaction.
UPDATE intel_state SET version = version + 1 RETURNING version;

-- name: IntelVersion :one
SELECT version FROM intel_state;

-- name: IntelVersionNow :one
-- The version of the feeds' advisories and the database's clock, as an
-- evaluation reads them (the soak is judged on that clock).
SELECT version, clock_timestamp()::timestamptz AS now FROM intel_state;

-- name: IntelMarkPackages :execrows
-- Records the components whose package is among the changed ones as
-- pending for the feed and marks them with the change's version, in the
-- batch's transaction: by code, every site's component of the code.
WITH affected AS (
    SELECT DISTINCT c.code FROM components c
    WHERE c.package = ANY(@packages::text[]) AND @ecosystem::text = 'npm'
),
marked AS (
    INSERT INTO intel_marks (code, version)
    SELECT code, @version::bigint FROM affected
    ON CONFLICT (code) DO UPDATE SET version = greatest(intel_marks.version, EXCLUDED.version)
)
INSERT INTO intel_pending (feed, code)
SELECT @feed::text, code FROM affected
ON CONFLICT DO NOTHING;

-- name: IntelMarkByKeys :execrows
-- Records the components an advisory with one of the given ids or aliases
-- (upper-cased: KEV and EPSS name CVEs) may concern as pending for the
-- feed, marked with the change's version: those whose current result
-- lists one, and those whose package a stored OSV record with one names
-- (a component whose version just changed has no such result yet, and its
-- evaluation from older catalogues must be refused too).
WITH affected AS (
    SELECT r.code FROM component_results r WHERE r.advisory_keys && @keys::text[]
    UNION
    SELECT c.code FROM components c
    JOIN osv_packages p ON p.ecosystem = 'npm' AND p.name = c.package
    JOIN osv_records o ON o.id = p.id
    WHERE o.keys && @keys::text[]
),
marked AS (
    INSERT INTO intel_marks (code, version)
    SELECT code, @version::bigint FROM affected
    ON CONFLICT (code) DO UPDATE SET version = greatest(intel_marks.version, EXCLUDED.version)
)
INSERT INTO intel_pending (feed, code)
SELECT @feed::text, code FROM affected
ON CONFLICT DO NOTHING;

-- name: IntelKnownCVEs :many
-- The CVEs the stored advisories name: the OSV records' aliases and the
-- current results' advisories (the publishers' too). The EPSS scores of
-- these alone are kept, and a catalogue change concerns these alone.
SELECT DISTINCT k.key::text AS cve
FROM (SELECT unnest(keys) AS key FROM osv_records
      UNION ALL
      SELECT unnest(advisory_keys) FROM component_results) k
WHERE k.key LIKE 'CVE-%';

-- name: IntelPending :many
-- The components a feed's sync must re-evaluate that can be evaluated
-- from a stored document, as ComponentListUnevaluated lists them, and
-- every pending code: each site's component of the code (site_id 0: no
-- site has it installed).
SELECT coalesce(c.site_id, 0)::bigint AS site_id, p.code, c.installed_version, c.source_url::text AS source_url, c.pinned_key,
       coalesce(c.package, '')::text AS package,
       (s.document IS NOT NULL)::boolean AS has_document,
       coalesce(c.policy, '')::text AS policy,
       coalesce((SELECT k.version FROM component_skips k WHERE k.site_id = c.site_id AND k.code = p.code), '')::text
           AS skipped_version,
       upcheck_approvals_of(c.site_id, p.code)::text AS approvals
FROM intel_pending p
LEFT JOIN components c ON c.code = p.code
LEFT JOIN sources s ON s.url = c.source_url
WHERE p.feed = @feed::text
ORDER BY c.source_url, p.code, c.site_id;

-- name: OSVForPackages :many
-- The records naming these packages of the ecosystem.
SELECT p.name, r.record
FROM osv_packages p
JOIN osv_records r ON r.id = p.id
WHERE p.ecosystem = @ecosystem::text AND p.name = ANY(@names::text[])
ORDER BY p.name, r.id;

-- name: OSVCount :one
SELECT count(*) FROM osv_records;

-- name: KEVAll :many
SELECT cve, date_added, due_date, required_action, ransomware FROM kev_entries;

-- name: KEVReplace :many
-- Replaces the catalogue with the given entries, writing only what
-- differs (entries no longer listed are deleted), and returns the CVEs
-- added, removed or changed.
WITH incoming AS (
    SELECT unnest(@cves::text[]) AS cve, unnest(@vendors::text[]) AS vendor, unnest(@products::text[]) AS product,
           unnest(@names::text[]) AS name, unnest(@dates_added::date[]) AS date_added,
           unnest(@due_dates::date[]) AS due_date, unnest(@actions::text[]) AS required_action,
           unnest(@ransomware::text[]) AS ransomware
),
gone AS (
    DELETE FROM kev_entries k WHERE NOT EXISTS (SELECT 1 FROM incoming i WHERE i.cve = k.cve)
    RETURNING k.cve
),
put AS (
    INSERT INTO kev_entries (cve, vendor, product, name, date_added, due_date, required_action, ransomware, epoch)
    SELECT cve, vendor, product, name, date_added, due_date, required_action, ransomware, @epoch::bigint FROM incoming
    ON CONFLICT (cve) DO UPDATE
    SET vendor = EXCLUDED.vendor, product = EXCLUDED.product, name = EXCLUDED.name, date_added = EXCLUDED.date_added,
        due_date = EXCLUDED.due_date, required_action = EXCLUDED.required_action, ransomware = EXCLUDED.ransomware,
        epoch = EXCLUDED.epoch
    WHERE (kev_entries.vendor, kev_entries.product, kev_entries.name, kev_entries.date_added, kev_entries.due_date,
           kev_entries.required_action, kev_entries.ransomware)
          IS DISTINCT FROM (EXCLUDED.vendor, EXCLUDED.product, EXCLUDED.name, EXCLUDED.date_added, EXCLUDED.due_date,
                            EXCLUDED.required_action, EXCLUDED.ransomware)
    RETURNING cve
)
SELECT cve::text FROM gone UNION SELECT cve::text FROM put;

-- name: EPSSAll :many
SELECT cve, epss, percentile FROM epss_scores;

-- name: EPSSCount :one
SELECT count(*) FROM epss_scores;

-- name: OSVStoredModified :many
-- The stored "modified" times of the records with these ids: an API
-- answer naming an id no newer than the stored record is not fetched.
SELECT id, modified FROM osv_records WHERE id = ANY(@ids::text[]);

-- name: OSVLastModified :one
-- The newest "modified" time among the stored records: a delta of the
-- archive starts after it.
SELECT CASE WHEN true THEN max(modified) END AS modified FROM osv_records WHERE feed = @feed::text;
