-- name: CatalogCounts :one
-- How many components each filter shows, with the search applied: the
-- filter links' counts and the page count come from this one statement,
-- with the same conditions as CatalogPage.
SELECT count(*)::bigint                                                AS total,
       count(*) FILTER (WHERE cs.security OR cs.vulnerable)::bigint    AS attention,
       count(*) FILTER (WHERE cs.update_available)::bigint             AS updates,
       count(*) FILTER (WHERE cs.security)::bigint                     AS security,
       count(*) FILTER (WHERE cs.vulnerable)::bigint                   AS vulnerable,
       count(*) FILTER (WHERE cs.failing)::bigint                      AS failing,
       count(*) FILTER (WHERE cs.stale)::bigint                        AS stale
FROM component_state cs
WHERE @search::text = '' OR cs.code ILIKE '%' || @search || '%' OR cs.name ILIKE '%' || @search || '%';

-- name: CatalogPage :many
-- What needs action first (upcheck_catalog_rank, migration 00015); within
-- each rank by name, then code, so a page boundary never moves between two
-- identical reads. A page starts either after skip_rows rows (the page's
-- page numbers) or, when after_code is set, after the row whose rank,
-- lower(name) and code are the cursor's (the API's after): a row added or
-- removed before the cursor moves no other row across it. security_since
-- is the exposure clock (component_exposure, migration 00011), looked up
-- for the rows of the page only.
SELECT cs.code, cs.name, cs.installed_version, cs.source_url, cs.evaluated,
       cs.latest_version, cs.update_version, cs.update_available, cs.security, cs.vulnerable,
       cs.vulnerable_no_fix, cs.needs_newer_core, cs.required_core, cs.open_advisories, cs.release_url,
       cs.stale, cs.failing, cs.eval_error, cs.last_success_at, cs.last_attempt_at, cs.last_error,
       s.last_error_kind, s.last_error_arg,
       (SELECT e.security_since FROM component_exposure e WHERE e.code = cs.code) AS security_since,
       upcheck_catalog_rank(cs.security, cs.vulnerable, cs.update_available, cs.source_url,
                            cs.failing, cs.stale, cs.evaluated)::integer AS sort_rank,
       lower(cs.name)::text AS sort_name
FROM component_state cs
-- The kind of the source's last failure, a fetch fact stored beside the
-- error (migration 00012), not a derived flag.
LEFT JOIN sources s ON s.url = cs.source_url
WHERE (@filter::text = ''
       OR (@filter = 'attention' AND (cs.security OR cs.vulnerable))
       OR (@filter = 'updates' AND cs.update_available)
       OR (@filter = 'security' AND cs.security)
       OR (@filter = 'vulnerable' AND cs.vulnerable)
       OR (@filter = 'failing' AND cs.failing)
       OR (@filter = 'stale' AND cs.stale))
  AND (@search::text = '' OR cs.code ILIKE '%' || @search || '%' OR cs.name ILIKE '%' || @search || '%')
  AND (@after_code::text = ''
       OR (upcheck_catalog_rank(cs.security, cs.vulnerable, cs.update_available, cs.source_url,
                                cs.failing, cs.stale, cs.evaluated), lower(cs.name), cs.code)
          > (@after_rank::integer, @after_name::text, @after_code))
ORDER BY upcheck_catalog_rank(cs.security, cs.vulnerable, cs.update_available, cs.source_url,
                              cs.failing, cs.stale, cs.evaluated),
         lower(cs.name), cs.code
LIMIT @max_rows OFFSET @skip_rows;

-- name: ComponentDetail :one
-- One component from the read model, with its whole evaluation (releases,
-- every advisory affecting the installed version), the ids of the
-- advisories whose dismissal is in force, its flags, its exposure and the
-- installed core's version (what a release's requires_core is judged against).
SELECT cs.code, cs.name, cs.installed_version, cs.source_url, cs.pinned_key, cs.evaluated,
       cs.latest_version, cs.evaluation, cs.eval_error, cs.stale, cs.failing, cs.source_failing,
       cs.last_success_at, cs.last_attempt_at, cs.last_error, cs.expires_at,
       (SELECT coalesce(array_agg(d.advisory_id ORDER BY d.advisory_id), '{}')
          FROM advisory_dismissals_in_force d WHERE d.component_code = cs.code)::text[] AS dismissed,
       s.last_error_kind, s.last_error_arg,
       cs.update_available, cs.security, cs.vulnerable, cs.vulnerable_no_fix, cs.needs_newer_core,
       (SELECT e.security_since FROM component_exposure e WHERE e.code = cs.code) AS security_since,
       coalesce((SELECT k.installed_version FROM components k WHERE k.code = 'core'), '')::text AS core_version
FROM component_state cs
LEFT JOIN sources s ON s.url = cs.source_url
WHERE cs.code = @code;

-- name: SourceHealthList :many
-- Every source in use, failing ones first, then the longest without a success.
SELECT ss.url, ss.components, ss.last_success_at, ss.last_attempt_at, ss.last_error, ss.consecutive_failures,
       ss.expires_at, ss.signature_state, ss.has_document, ss.expired, ss.stale, ss.failing,
       s.last_error_kind, s.last_error_arg, ss.offline
FROM source_state ss
LEFT JOIN sources s ON s.url = ss.url
ORDER BY ss.failing DESC, ss.last_success_at NULLS FIRST, ss.url;
