-- name: PackageList :many
-- One page of the installed packages (tree_package_names) in name order,
-- after the name @after (empty: from the first): keyset paging, so
-- packages added or removed before the cursor do not shift the page. The
-- filters are readmodel.PackageFilters, each written here once over the
-- view's flags and its findings (tree_finding_state, those the setting
-- @dev_mode shows, upcheck_tree_shown, and neither withdrawn nor
-- dismissed); PackageCounts counts the same predicates.
SELECT n.name, n.versions, n.instances, n.dev, n.install_script, n.other_sources, n.components, n.heads, n.path
FROM tree_package_names n
LEFT JOIN LATERAL (SELECT bool_or(true) AS vulnerable, bool_or(s.malicious) AS malicious, bool_or(s.known_exploited) AS exploited
                   FROM tree_finding_state s
                   WHERE s.site_id = n.site_id AND s.name = n.name AND NOT s.withdrawn AND NOT s.dismissed
                     AND upcheck_tree_shown(@dev_mode::text, s.dev, s.malicious)) f ON true
WHERE n.site_id = @site
  AND (@filter::text = ''
       OR (@filter = 'vulnerable' AND f.vulnerable)
       OR (@filter = 'malicious' AND f.malicious)
       OR (@filter = 'exploited' AND f.exploited)
       OR (@filter = 'dev' AND n.dev)
       OR (@filter = 'scripts' AND n.install_script)
       OR (@filter = 'sources' AND cardinality(n.other_sources) > 0))
  AND (@component::text = '' OR @component = ANY (n.components))
  AND (@search::text = '' OR strpos(lower(n.name), lower(@search)) > 0)
  AND (@after::text = '' OR n.name > @after)
ORDER BY n.name
LIMIT @row_limit::bigint;

-- name: PackageCounts :one
-- How many packages each filter shows, with the same component and
-- search as the page.
SELECT count(*)::bigint                                                   AS total,
       count(*) FILTER (WHERE f.vulnerable)::bigint                       AS vulnerable,
       count(*) FILTER (WHERE f.malicious)::bigint                        AS malicious,
       count(*) FILTER (WHERE f.exploited)::bigint                        AS exploited,
       count(*) FILTER (WHERE n.dev)::bigint                              AS dev,
       count(*) FILTER (WHERE n.install_script)::bigint                   AS scripts,
       count(*) FILTER (WHERE cardinality(n.other_sources) > 0)::bigint   AS sources
FROM tree_package_names n
LEFT JOIN LATERAL (SELECT bool_or(true) AS vulnerable, bool_or(s.malicious) AS malicious, bool_or(s.known_exploited) AS exploited
                   FROM tree_finding_state s
                   WHERE s.site_id = n.site_id AND s.name = n.name AND NOT s.withdrawn AND NOT s.dismissed
                     AND upcheck_tree_shown(@dev_mode::text, s.dev, s.malicious)) f ON true
WHERE n.site_id = @site
  AND (@component::text = '' OR @component = ANY (n.components))
  AND (@search::text = '' OR strpos(lower(n.name), lower(@search)) > 0);

-- name: ComponentDependencies :one
-- How many package instances a component brings in, itself left out (its
-- own instance: its package, reached as a direct dependency of the site).
SELECT count(*)::bigint AS packages
FROM tree_packages t
WHERE t.site_id = @site AND @code::text = ANY (t.components)
  AND NOT (t.name = @package::text
           AND EXISTS (SELECT 1 FROM jsonb_array_elements(t.via) AS v(e) WHERE jsonb_array_length(v.e->'path') = 1));

-- name: PackageFixes :many
-- What clears each finding on the instances of one package (tree_fixes,
-- decided by the check), by instance and advisory.
SELECT f.package_id, f.advisory_id, f.fix, f.direct
FROM tree_fixes f
JOIN tree_packages p ON p.site_id = f.site_id AND p.id = f.package_id
WHERE f.site_id = @site AND p.name = @name
ORDER BY f.package_id, f.advisory_id;
