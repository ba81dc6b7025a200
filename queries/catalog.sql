-- name: CatalogAll :many
-- Every component as the read model sees it, with its rank
-- (upcheck_catalog_rank: what needs action first) and
-- its exposure clock (the view component_exposure). The catalog
-- page and API read this whole snapshot at most twice a second per
-- instance and filter, search, order and page it in memory
-- (catalog.Snapshot): at 10,000 components a page then reads no
-- rows at all, where a query per page joined and ranked every row, and
-- the snapshot is read again only when ReadModelUnchanged says so
-- (docs/performance.md). The order is the snapshot's (rank, then
-- sort_name, then code, compared byte-wise), so it is not asked for here.
SELECT cs.code, cs.name, cs.installed_version, cs.source_url, cs.evaluated,
       cs.latest_version, cs.update_version, cs.update_available, cs.security, cs.vulnerable,
       cs.vulnerable_no_fix, cs.needs_newer_core, cs.required_core, cs.open_advisories, cs.release_url,
       cs.stale, cs.failing, cs.eval_error, cs.last_success_at, cs.last_attempt_at, cs.last_error,
       s.last_error_kind, s.last_error_args, cs.deprecated, cs.provenance_lost,
       e.security_since,
       cs.known_exploited, cs.malicious, cs.package,
       -- What the policy held back (docs/policy.md), from the current
       -- result: the newest waiting release, when it soaks and the reason
       -- the result stored for it (a kind and its arguments, worded when
       -- read: the release's own, read from the evaluation for the rows
       -- that have one; null: none), the newest release the policy does
       -- not offer and why, and the skip when it hid a release, with who
       -- skipped it.
       cs.policy, cs.waiting_version, cs.waiting_until,
       (CASE WHEN cs.waiting_version IS NOT NULL THEN
            (SELECT x.rel->'reason' FROM jsonb_array_elements(cs.evaluation->'releases') AS x(rel)
              WHERE x.rel->>'version' = cs.waiting_version LIMIT 1) END)::jsonb AS waiting_reason,
       cs.held_version, cs.held_reason,
       coalesce(cs.skipped_version, '')::text AS skipped_version, k.reason AS skip_reason, k.actor AS skip_actor,
       coalesce(k.from_manifest, false)::boolean AS skip_from_manifest, k.skipped_at,
       -- The trust downgrades besides provenance_lost: the offered version
       -- published by an account new to the package (the current result),
       -- and a manifest sync that lowered the source's pin (shown while it
       -- stands, evaluated or not: the lowered pin is why the component
       -- waits for its next check).
       cs.new_publisher_version, cs.new_publisher, cs.pin_downgrade, cs.pin_downgraded_at,
       -- What the offered npm update brings (readmodel.Signal, most
       -- pressing first; null: nothing).
       (cs.registry_facts->'brings')::jsonb AS brings,
       -- What needs attention (the attention filter), as the summary
       -- counts it: one definition.
       upcheck_needs_attention(cs.malicious, cs.known_exploited, cs.security, cs.vulnerable, cs.provenance_lost,
                               cs.new_publisher_version, cs.pin_downgrade, cs.deprecated,
                               CASE WHEN cs.update_available THEN cs.registry_facts->'brings' END) AS needs_attention,
       -- The smallest release that clears the advisories (docs/policy.md).
       cs.fix_version,
       upcheck_catalog_rank(cs.malicious, cs.known_exploited, cs.security, cs.vulnerable, cs.update_available, cs.source_url,
                            cs.failing, cs.stale, cs.evaluated)::integer AS sort_rank,
       lower(cs.name)::text AS sort_name,
       -- The ids and aliases of the advisories of the current result,
       -- upper-cased (upcheck_advisory_keys): the search finds a component by
       -- any of them. component_results holds one row per component, the
       -- current one while cs.evaluated.
       (CASE WHEN cs.evaluated THEN r.advisory_keys ELSE '{}' END)::text[] AS advisory_keys,
       -- The advisories of the current result whose dismissal is in force:
       -- how many, and the soonest end of those that end ("Up to date ·
       -- 1 advisory dismissed until 20 Dec").
       (CASE WHEN cs.evaluated THEN coalesce(dm.n, 0) ELSE 0 END)::integer AS dismissed_count,
       CASE WHEN cs.evaluated THEN dm.until END AS dismissed_until,
       -- What in the component's dependencies needs attention
       -- (upcheck_component_tree_attention under UPCHECK_LOCKFILE_DEV, over
       -- upcheck_tree_attention, the one definition): how many package
       -- versions, and how many of them malicious ("Up to date · 2
       -- vulnerable dependencies").
       coalesce(tc.counted, 0)::integer AS tree_counted,
       coalesce(tc.malicious, 0)::integer AS tree_malicious,
       -- When this snapshot may be reused: read in the
       -- same statement, so they describe exactly these rows.
       (SELECT v.version FROM read_model_version v)::bigint AS version,
       -- (a subquery: computed once, not for each row; in a CASE because
       -- sqlc takes a function's result for never null)
       CASE WHEN true THEN (SELECT upcheck_read_model_turns_at()) END AS turns_at
FROM component_state cs
-- The kind of the source's last failure, a fetch fact stored beside the
-- error (sources.last_error_kind), not a derived flag.
LEFT JOIN sources s ON s.url = cs.source_url
LEFT JOIN component_exposure e ON e.site_id = cs.site_id AND e.code = cs.code
LEFT JOIN component_results r ON r.site_id = cs.site_id AND r.code = cs.code
-- The skip of a current result that hid a release (skipped_version is
-- the evaluation's): the result was evaluated under this very skip.
LEFT JOIN component_skips k ON k.site_id = cs.site_id AND k.code = cs.code AND cs.skipped_version IS NOT NULL
LEFT JOIN (SELECT f.component_code, count(*) AS n, min(d.expires_at) AS until
           FROM advisory_dismissals_in_force f
           JOIN advisory_dismissals d ON d.id = f.id
           WHERE f.site_id = @site::bigint
           GROUP BY f.component_code) dm ON dm.component_code = cs.code
LEFT JOIN (SELECT a.code::text AS code, count(DISTINCT (a.name, a.version))::integer AS counted,
                  (count(DISTINCT (a.name, a.version)) FILTER (WHERE a.malicious))::integer AS malicious
           FROM upcheck_component_tree_attention(@site::bigint, @dev_mode::text) a
           GROUP BY 1) tc ON tc.code = cs.code
WHERE cs.site_id = @site::bigint;

-- name: ReadModelUnchanged :one
-- Whether a snapshot read at version, which may be reused until turns_at
-- (null: no instant is due), still says what the read model says now.
SELECT (v.version = @version::bigint
        AND (sqlc.narg(turns_at)::timestamptz IS NULL OR sqlc.narg(turns_at)::timestamptz > clock_timestamp()))::boolean
FROM read_model_version v;

-- name: ComponentDetail :one
-- One component from the read model, with its whole evaluation (releases,
-- every advisory affecting the installed version), the ids of the
-- advisories whose dismissal is in force, its flags, its exposure and the
-- installed core's version (what a release's requires_core is judged against),
-- its policy, its skip (whether or not it hides a release now), and what
-- lowered its trust (a manifest sync's pin downgrade while it shows, the
-- offered npm version's new publisher) (docs/policy.md).
SELECT cs.code, cs.name, cs.installed_version, cs.source_url, cs.pinned_key, cs.evaluated,
       cs.latest_version, cs.evaluation, cs.eval_error, cs.stale, cs.failing, cs.source_failing,
       cs.last_success_at, cs.last_attempt_at, cs.last_error, cs.expires_at,
       (SELECT coalesce(array_agg(d.advisory_id ORDER BY d.advisory_id), '{}')
          FROM advisory_dismissals_in_force d WHERE d.site_id = cs.site_id AND d.component_code = cs.code)::text[] AS dismissed,
       s.last_error_kind, s.last_error_args,
       cs.update_available, cs.security, cs.vulnerable, cs.vulnerable_no_fix, cs.needs_newer_core,
       cs.deprecated, cs.provenance_lost, cs.registry_facts, cs.known_exploited, cs.malicious, cs.package,
       (SELECT e.security_since FROM component_exposure e WHERE e.site_id = cs.site_id AND e.code = cs.code) AS security_since,
       coalesce((SELECT k.installed_version FROM components k WHERE k.site_id = cs.site_id AND k.code = 'core'), '')::text
           AS core_version,
       -- When the feeds' OSV advisories of the component's package were
       -- last read: the latest success of an osv feed (its archive holds
       -- every package), or of an osv-api feed after the component took its
       -- version (the API is asked of the installed versions only); null:
       -- its advisories were never read (no package, no such feed, a
       -- version the API was not asked of yet).
       CASE WHEN cs.package IS NOT NULL
            THEN (SELECT max(f.last_success_at) FROM feeds f, components k
                  WHERE k.site_id = cs.site_id AND k.code = cs.code
                    AND (f.kind = 'osv' OR (f.kind = 'osv-api' AND f.last_success_at >= k.updated_at))) END AS osv_read_at,
       coalesce(cs.policy, '')::text AS policy,
       cs.pin_downgrade, cs.pin_downgraded_at, cs.new_publisher_version, cs.new_publisher,
       sk.version AS skip_version, sk.reason AS skip_reason, sk.actor AS skip_actor,
       coalesce(sk.from_manifest, false)::boolean AS skip_from_manifest, sk.skipped_at AS skipped_at
FROM component_state cs
LEFT JOIN sources s ON s.url = cs.source_url
LEFT JOIN component_skips sk ON sk.site_id = cs.site_id AND sk.code = cs.code
WHERE cs.site_id = @site AND cs.code = @code;

-- name: SourceHealthList :many
-- Every source a site's components use (site_source_state), failing ones
-- first, then the longest without a success.
-- expires_soon: the stored document expires within the expiry warning
-- (upcheck_expiry_warning, as source_state.untrusted judges it) and has
-- not expired yet, on the database clock.
SELECT ss.url, ss.components, ss.last_success_at, ss.last_attempt_at, ss.last_error, ss.consecutive_failures,
       ss.expires_at, ss.signature_state, ss.has_document, ss.expired, ss.stale, ss.failing,
       s.last_error_kind, s.last_error_args, ss.offline,
       coalesce(ss.pin, '')::text AS pin, ss.trusted_count, ss.key_version, ss.sequence, ss.verified_by, ss.untrusted,
       ss.unsigned, coalesce(ss.registry, '')::text AS registry, coalesce(ss.registry_keys, '{}')::text[] AS registry_keys,
       ss.keys_changed_at,
       coalesce(ss.has_document AND NOT ss.expired AND ss.expires_at < clock_timestamp() + upcheck_expiry_warning(), false)::boolean
           AS expires_soon
FROM site_source_state ss
LEFT JOIN sources s ON s.url = ss.url
WHERE ss.site_id = @site::bigint
ORDER BY ss.failing DESC, ss.last_success_at NULLS FIRST, ss.url;
