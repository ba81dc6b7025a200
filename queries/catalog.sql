-- name: CatalogCount :one
SELECT count(*)::bigint
FROM component_state cs
WHERE (@filter::text = ''
       OR (@filter = 'updates' AND cs.update_available)
       OR (@filter = 'security' AND cs.security)
       OR (@filter = 'vulnerable' AND cs.vulnerable)
       OR (@filter = 'failing' AND cs.failing)
       OR (@filter = 'stale' AND cs.stale))
  AND (@search::text = '' OR cs.code ILIKE '%' || @search || '%' OR cs.name ILIKE '%' || @search || '%');

-- name: CatalogPage :many
-- Components needing attention first (security, vulnerable, updates), then
-- by code, so a page boundary never moves between two identical reads.
SELECT cs.code, cs.name, cs.installed_version, cs.source_url, cs.evaluated,
       cs.latest_version, cs.update_version, cs.update_available, cs.security, cs.vulnerable,
       cs.vulnerable_no_fix, cs.needs_newer_core, cs.required_core, cs.open_advisories, cs.release_url,
       cs.stale, cs.failing, cs.eval_error, cs.last_success_at, cs.last_attempt_at, cs.last_error,
       s.last_error_kind, s.last_error_arg
FROM component_state cs
-- The kind of the source's last failure, a fetch fact stored beside the
-- error (migration 00012), not a derived flag.
LEFT JOIN sources s ON s.url = cs.source_url
WHERE (@filter::text = ''
       OR (@filter = 'updates' AND cs.update_available)
       OR (@filter = 'security' AND cs.security)
       OR (@filter = 'vulnerable' AND cs.vulnerable)
       OR (@filter = 'failing' AND cs.failing)
       OR (@filter = 'stale' AND cs.stale))
  AND (@search::text = '' OR cs.code ILIKE '%' || @search || '%' OR cs.name ILIKE '%' || @search || '%')
ORDER BY cs.security DESC, cs.vulnerable DESC, cs.update_available DESC, cs.code
LIMIT @max_rows OFFSET @skip_rows;

-- name: ComponentDetail :one
-- One component from the read model, with its whole evaluation (releases,
-- every advisory affecting the installed version) and the ids of the
-- advisories whose dismissal is in force.
SELECT cs.code, cs.name, cs.installed_version, cs.source_url, cs.pinned_key, cs.evaluated,
       cs.latest_version, cs.evaluation, cs.eval_error, cs.stale, cs.failing, cs.source_failing,
       cs.last_success_at, cs.last_attempt_at, cs.last_error, cs.expires_at,
       (SELECT coalesce(array_agg(d.advisory_id ORDER BY d.advisory_id), '{}')
          FROM advisory_dismissals_in_force d WHERE d.component_code = cs.code)::text[] AS dismissed,
       s.last_error_kind, s.last_error_arg
FROM component_state cs
LEFT JOIN sources s ON s.url = cs.source_url
WHERE cs.code = @code;

-- name: SourceHealthList :many
-- Every source in use, failing ones first, then the longest without a success.
SELECT ss.url, ss.components, ss.last_success_at, ss.last_attempt_at, ss.last_error, ss.consecutive_failures,
       ss.expires_at, ss.signature_state, ss.has_document, ss.expired, ss.stale, ss.failing,
       s.last_error_kind, s.last_error_arg
FROM source_state ss
LEFT JOIN sources s ON s.url = ss.url
ORDER BY ss.failing DESC, ss.last_success_at NULLS FIRST, ss.url;
