-- name: ComponentTreeCounts :one
-- How many package versions in the component's dependencies need
-- attention (upcheck_component_tree_attention under UPCHECK_LOCKFILE_DEV),
-- and how many of them a malicious-package record names: the catalog
-- row's count (queries/catalog.sql tree_counted), for one component.
SELECT count(DISTINCT (a.name, a.version))::integer                             AS counted,
       (count(DISTINCT (a.name, a.version)) FILTER (WHERE a.malicious))::integer AS malicious
FROM upcheck_component_tree_attention(@site::bigint, @dev_mode::text) a
WHERE a.code = @code::text;

-- name: ComponentTreeFindings :many
-- What in the component's dependencies needs attention, one row per
-- installed instance and finding, most urgent first (then by name,
-- version and place): its kind, one shortest path to it from the
-- component's package (from another direct dependency of the site only
-- when none passes through the component's), the fix the last check
-- decided (tree_fixes; null: none decided) and the finding's severity and
-- first fixed version. At most @max_rows rows.
SELECT a.kind::text AS kind, a.name::text AS name, a.version::text AS version, a.advisory_id::text AS advisory_id,
       a.malicious::boolean AS malicious, a.instance_id::text AS instance_id,
       coalesce((SELECT v.e->'path'
                   FROM tree_packages p CROSS JOIN LATERAL jsonb_array_elements(p.via) AS v(e)
                  WHERE p.site_id = @site AND p.id = a.instance_id
                  ORDER BY (v.e->>'head') IS DISTINCT FROM @package::text, jsonb_array_length(v.e->'path'), v.e->>'head'
                  LIMIT 1), '[]')::jsonb AS path,
       x.fix AS fix,
       coalesce(f.severity, '')::text AS severity, f.fixed_in AS fixed_in
FROM upcheck_component_tree_attention(@site::bigint, @dev_mode::text) a
LEFT JOIN tree_fixes x ON x.site_id = @site AND x.package_id = a.instance_id AND x.advisory_id = a.advisory_id
LEFT JOIN tree_findings f ON f.name = a.name AND f.version = a.version AND f.advisory_id = a.advisory_id
WHERE a.code = @code::text
ORDER BY array_position(ARRAY['malicious', 'known_exploited', 'vulnerable_no_fix', 'vulnerable'], a.kind::text),
         a.name, a.version, a.instance_id, a.advisory_id
LIMIT @max_rows::bigint;
