-- name: ResultWrite :many
-- Writes evaluations, each only if the inputs it was evaluated from are
-- still the current ones: the component is installed at that version from
-- that source, the core is installed at that version, the source's stored
-- document is the one evaluated, no feed changed an advisory of the
-- component since the advisories evaluated with were read, and its policy
-- and skip are the ones evaluated with. A result whose inputs moved is not
-- written and its code does not come back: the caller evaluates again from
-- the current inputs, or a newer writer already did. The read model
-- (component_state) applies the same conditions when it reads, so a row
-- that slipped past them never counts.
--
-- The results come as one JSON array (store.resultRows), one object per
-- component, so that a source's results, or a group of sources', are one
-- statement inside the fenced transaction (docs/performance.md); each
-- names its site (site_id: every site's components of a source are
-- evaluated from the one document), and no site's code may appear twice
-- in one call.
--
-- The same statement keeps the exposure clock (table security_problems): the
-- result's security problems (its advisories, its security releases) that
-- security_problems does not hold yet are stamped now, those it holds keep
-- their stamp, and those the result no longer has are forgotten. It also
-- writes the audit row of a trust downgrade the result brings
-- (docs/policy.md): an offered npm version that lost provenance, or that
-- an account new to the package published, unless the row before said so.
WITH before AS (
    SELECT b.site_id, b.code, b.provenance_lost, b.new_publisher_version
    FROM component_results b
    WHERE (b.site_id, b.code) IN (SELECT (e->>'site_id')::bigint, e->>'code' FROM jsonb_array_elements(@results::jsonb) e)
),
written AS (
INSERT INTO component_results (site_id, code, source_url, installed_version, core_version, document_hash, verified_key,
                               latest_version, update_version, security_version, security_versions, update_available,
                               security, needs_newer_core, required_core, advisories, advisory_ids, no_fix_ids,
                               evaluation, release_url, eval_error, evaluated_at, epoch,
                               deprecated, provenance_lost, registry_facts,
                               intel_version, exploited_ids, malicious_ids,
                               policy, skipped_version, waiting_version, waiting_until, held_version, held_reason,
                               next_change_at, new_publisher_version, new_publisher, fix_ids, fix_version, approvals)
SELECT c.site_id, c.code, c.source_url, c.installed_version, i.core_version, c.document_hash,
       i.verified_key, i.latest_version, i.update_version,
       i.security_version, i.security_versions,
       i.update_available, i.security, i.needs_newer_core, i.required_core,
       i.advisories, i.advisory_ids, i.no_fix_ids, i.evaluation,
       i.release_url, i.eval_error,
       clock_timestamp(), i.epoch,
       i.deprecated, i.provenance_lost, i.registry_facts,
       i.intel_version, i.exploited_ids, i.malicious_ids,
       c.policy, i.skipped_version, i.waiting_version,
       i.waiting_until, i.held_version, i.held_reason,
       i.next_change_at, i.new_publisher_version, i.new_publisher,
       i.fix_ids, i.fix_version, coalesce(i.approvals, '')
FROM jsonb_populate_recordset(NULL::component_results, @results::jsonb) i
-- each result's component and source looked up by key (LIMIT 1 keeps the
-- planner from joining the function's rows, which it guesses at 100, with
-- every component instead)
CROSS JOIN LATERAL (SELECT c.site_id, c.code, c.source_url, c.installed_version, c.policy, s.document_hash
                    FROM components c JOIN sources s ON s.url = c.source_url
                    WHERE c.site_id = i.site_id AND c.code = i.code LIMIT 1) c
WHERE c.installed_version = i.installed_version
  AND c.source_url = i.source_url
  AND c.document_hash = i.document_hash
  -- (a registered site's lockfile may name no core: '')
  AND (c.code = 'core' OR i.core_version = coalesce((SELECT k.installed_version FROM components k
                                                      WHERE k.site_id = c.site_id AND k.code = 'core'), ''))
  -- evaluated with the feeds' advisories as they are since the last change
  -- that affected the component (migrations/00009_feeds.sql)
  AND NOT EXISTS (SELECT 1 FROM intel_marks m WHERE m.code = c.code AND m.version > i.intel_version)
  -- under the component's policy and skip as they are now (docs/policy.md)
  AND c.policy IS NOT DISTINCT FROM i.policy
  AND i.skipped_version IS NOT DISTINCT FROM (SELECT k.version FROM component_skips k
                                              WHERE k.site_id = c.site_id AND k.code = c.code)
  -- and its approvals (migrations/00018_approvals.sql), the function
  -- called only for a component that has some: called for every row it
  -- cost the fenced write a quarter of a millisecond a source (docs/performance.md)
  AND coalesce(i.approvals, '') = CASE WHEN EXISTS (SELECT 1 FROM component_approvals a
                                                    WHERE a.site_id = c.site_id AND a.code = c.code)
                                       THEN upcheck_approvals_of(c.site_id, c.code) ELSE '' END
ON CONFLICT (site_id, code) DO UPDATE
SET source_url        = EXCLUDED.source_url,
    installed_version = EXCLUDED.installed_version,
    core_version      = EXCLUDED.core_version,
    document_hash     = EXCLUDED.document_hash,
    verified_key      = EXCLUDED.verified_key,
    latest_version    = EXCLUDED.latest_version,
    update_version    = EXCLUDED.update_version,
    security_version  = EXCLUDED.security_version,
    security_versions = EXCLUDED.security_versions,
    update_available  = EXCLUDED.update_available,
    security          = EXCLUDED.security,
    needs_newer_core  = EXCLUDED.needs_newer_core,
    required_core     = EXCLUDED.required_core,
    advisories        = EXCLUDED.advisories,
    advisory_ids      = EXCLUDED.advisory_ids,
    no_fix_ids        = EXCLUDED.no_fix_ids,
    evaluation        = EXCLUDED.evaluation,
    release_url       = EXCLUDED.release_url,
    eval_error        = EXCLUDED.eval_error,
    evaluated_at      = EXCLUDED.evaluated_at,
    epoch             = EXCLUDED.epoch,
    deprecated        = EXCLUDED.deprecated,
    provenance_lost   = EXCLUDED.provenance_lost,
    registry_facts    = EXCLUDED.registry_facts,
    intel_version     = EXCLUDED.intel_version,
    exploited_ids     = EXCLUDED.exploited_ids,
    malicious_ids     = EXCLUDED.malicious_ids,
    policy            = EXCLUDED.policy,
    skipped_version   = EXCLUDED.skipped_version,
    waiting_version   = EXCLUDED.waiting_version,
    waiting_until     = EXCLUDED.waiting_until,
    held_version      = EXCLUDED.held_version,
    held_reason       = EXCLUDED.held_reason,
    next_change_at    = EXCLUDED.next_change_at,
    new_publisher_version = EXCLUDED.new_publisher_version,
    new_publisher     = EXCLUDED.new_publisher,
    fix_ids           = EXCLUDED.fix_ids,
    fix_version       = EXCLUDED.fix_version,
    approvals         = EXCLUDED.approvals
RETURNING site_id, code, source_url, advisory_ids, security_versions, provenance_lost, new_publisher_version, new_publisher
),
downgraded AS (
    INSERT INTO audit_log (action, detail)
    SELECT 'source.downgrade',
           jsonb_strip_nulls(jsonb_build_object('component', w.code, 'source', w.source_url, 'kind', d.kind,
                                                'version', d.version, 'account', d.account, 'by', 'check'))
    FROM written w
    LEFT JOIN before b ON b.site_id = w.site_id AND b.code = w.code
    CROSS JOIN LATERAL (VALUES ('provenance_lost', w.provenance_lost, NULL::text, b.provenance_lost),
                               ('new_publisher', w.new_publisher_version, w.new_publisher, b.new_publisher_version))
                       AS d (kind, version, account, was)
    WHERE d.version IS NOT NULL AND d.version IS DISTINCT FROM d.was
),
problems AS (
    SELECT site_id, code, 'advisory' AS kind, unnest(advisory_ids) AS problem FROM written
    UNION
    SELECT site_id, code, 'release', unnest(security_versions) FROM written
),
gone AS (
    DELETE FROM security_problems p
    USING written w
    WHERE p.site_id = w.site_id AND p.code = w.code
      AND NOT EXISTS (SELECT 1 FROM problems n
                      WHERE n.site_id = p.site_id AND n.code = p.code AND n.kind = p.kind AND n.problem = p.problem)
),
seen AS (
    INSERT INTO security_problems (site_id, code, kind, problem, first_seen_at)
    SELECT site_id, code, kind, problem, clock_timestamp() FROM problems
    ON CONFLICT (site_id, code, kind, problem) DO NOTHING
)
SELECT site_id, code FROM written;

-- name: ResultDeleteOrphans :execrows
-- Results of components no longer installed, or whose source changed.
DELETE FROM component_results r
WHERE NOT EXISTS (SELECT 1 FROM components c
                  WHERE c.site_id = r.site_id AND c.code = r.code AND c.source_url IS NOT DISTINCT FROM r.source_url);

-- name: ResultsOfferChanged :many
-- Components whose current result's offer changed with time: a release
-- that waited for its soak has soaked (next_change_at passed, on the
-- database's clock). They are evaluated again from the stored documents,
-- which raises the notification of the release offered then, once.
-- Every site's.
-- now() (one statement: its start) so that next_change_at's index bounds
-- the scan, where clock_timestamp(), volatile, would not.
SELECT cs.site_id, cs.code, cs.installed_version, cs.source_url::text AS source_url, cs.pinned_key,
       coalesce(cs.package, '')::text AS package, coalesce(cs.policy, '')::text AS policy,
       coalesce((SELECT k.version FROM component_skips k WHERE k.site_id = cs.site_id AND k.code = cs.code), '')::text
           AS skipped_version,
       upcheck_approvals_of(cs.site_id, cs.code)::text AS approvals
FROM component_results r
JOIN component_state cs ON cs.site_id = r.site_id AND cs.code = r.code AND cs.evaluated
WHERE r.next_change_at <= now()
ORDER BY cs.source_url, cs.site_id, cs.code;
