-- name: CatalogCount :one
SELECT count(*)::bigint
FROM components c
LEFT JOIN component_results r
       ON r.code = c.code AND r.installed_version = c.installed_version
      AND r.source_url IS NOT DISTINCT FROM c.source_url
WHERE (@filter::text = ''
       OR (@filter = 'updates' AND r.update_available)
       OR (@filter = 'security' AND r.security)
       OR (@filter = 'vulnerable' AND r.vulnerable)
       OR (@filter = 'failing' AND r.last_error IS NOT NULL)
       OR (@filter = 'stale' AND c.source_url IS NOT NULL
           AND (r.stale OR r.last_success_at < clock_timestamp() - interval '48 hours')))
  AND (@search::text = '' OR c.code ILIKE '%' || @search || '%' OR c.name ILIKE '%' || @search || '%');

-- name: CatalogPage :many
-- Components needing attention first (security, vulnerable, updates), then
-- by code, so a page boundary never moves between two identical reads.
SELECT c.code, c.name, c.installed_version, c.source_url,
       r.latest_version, r.update_version,
       coalesce(r.update_available, false)::boolean AS update_available,
       coalesce(r.security, false)::boolean         AS security,
       coalesce(r.vulnerable, false)::boolean       AS vulnerable,
       coalesce(r.needs_newer_core, false)::boolean AS needs_newer_core,
       r.required_core, r.advisories, r.release_url,
       coalesce(r.stale, false)::boolean            AS stale,
       r.last_success_at, r.last_error, s.last_attempt_at
FROM components c
LEFT JOIN component_results r
       ON r.code = c.code AND r.installed_version = c.installed_version
      AND r.source_url IS NOT DISTINCT FROM c.source_url
LEFT JOIN sources s ON s.url = c.source_url
WHERE (@filter::text = ''
       OR (@filter = 'updates' AND r.update_available)
       OR (@filter = 'security' AND r.security)
       OR (@filter = 'vulnerable' AND r.vulnerable)
       OR (@filter = 'failing' AND r.last_error IS NOT NULL)
       OR (@filter = 'stale' AND c.source_url IS NOT NULL
           AND (r.stale OR r.last_success_at < clock_timestamp() - interval '48 hours')))
  AND (@search::text = '' OR c.code ILIKE '%' || @search || '%' OR c.name ILIKE '%' || @search || '%')
ORDER BY coalesce(r.security, false) DESC, coalesce(r.vulnerable, false) DESC,
         coalesce(r.update_available, false) DESC, c.code
LIMIT @max_rows OFFSET @skip_rows;

-- name: ComponentDetail :one
SELECT c.code, c.name, c.installed_version, c.source_url, c.pinned_key,
       r.latest_version, r.evaluation, r.last_success_at, r.last_error,
       s.document, s.last_attempt_at,
       coalesce((SELECT k.installed_version FROM components k WHERE k.code = 'core'), '')::text AS core_version
FROM components c
LEFT JOIN component_results r
       ON r.code = c.code AND r.installed_version = c.installed_version
      AND r.source_url IS NOT DISTINCT FROM c.source_url
LEFT JOIN sources s ON s.url = c.source_url
WHERE c.code = @code;

-- name: SourceHealthList :many
-- Failing sources first, then the longest without a success.
SELECT s.url, s.last_success_at, s.last_attempt_at, s.last_error, s.consecutive_failures,
       s.expires_at, s.signature_state,
       (s.expires_at IS NOT NULL AND s.expires_at < clock_timestamp())::boolean AS expired,
       coalesce((s.expires_at IS NOT NULL AND s.expires_at < clock_timestamp())
                 OR s.last_success_at < clock_timestamp() - interval '48 hours', false)::boolean AS stale,
       (SELECT count(*) FROM components c WHERE c.source_url = s.url)::bigint AS components
FROM sources s
WHERE EXISTS (SELECT 1 FROM components c WHERE c.source_url = s.url)
ORDER BY (s.last_error IS NULL), s.last_success_at NULLS FIRST, s.url;
