-- name: TreeSitesWithTree :many
-- The sites whose tree was read once (a lockfile synced or pushed).
SELECT site_id FROM tree_state ORDER BY site_id;

-- name: TreePackagesAll :many
-- The whole tree as the fix step reads it (remedy.Input.Tree).
SELECT id, name, alias, version, dev, optional, peer, source, resolved, integrity, install_script
FROM tree_packages
WHERE site_id = @site
ORDER BY id;

-- name: TreeEdgesAll :many
SELECT from_id, name, kind, range, coalesce(to_id, '')::text AS to_id
FROM tree_edges
WHERE site_id = @site
ORDER BY from_id, name, kind;

-- name: TreeFindingsForFixes :many
-- The findings the fix step decides: every installed instance's
-- non-withdrawn findings (a local package's, link: or file:, is never
-- matched), with the advisory's keys to read its record by.
SELECT p.id AS package_id, f.name, f.version, f.advisory_id, f.advisory_keys, f.severity, f.fixed_in
FROM tree_findings f
JOIN tree_packages p ON p.site_id = @site AND p.name = f.name AND p.version = f.version AND p.source NOT IN ('link', 'file')
WHERE NOT f.withdrawn
ORDER BY p.id, f.advisory_id;

-- name: TreeFixesDeleteStale :execrows
-- The fixes whose finding is gone: the instance's version changed (its
-- row is updated in place, keeping its id) or the advisory no longer
-- affects it; of every site (@every: the feeds moved) or of the sites
-- @sites evaluated (only their trees, and their versions' findings,
-- moved). Run in the evaluation's fenced transaction. (Of every site, a
-- push's evaluation took 9.4 s at 10,000 sites: docs/performance.md "The
-- fleet".)
DELETE FROM tree_fixes x
WHERE (@every::boolean OR x.site_id = ANY (@sites::bigint[]))
  AND NOT EXISTS (SELECT 1 FROM tree_packages p
                  JOIN tree_findings f ON f.name = p.name AND f.version = p.version
                  WHERE p.site_id = x.site_id AND p.id = x.package_id AND f.advisory_id = x.advisory_id AND NOT f.withdrawn);

-- name: EventPlanTreeFindings :many
-- One tree.finding event per channel and counted finding (under
-- @dev_mode, upcheck_tree_counted) new in this transaction (stamped after
-- it began: an unchanged finding keeps its found_at), keyed by the
-- package version and the advisory: once, whoever writes it. A vulnerable
-- finding's EPSS below a channel's least is not sent there; malicious and
-- exploited ones always are. Only the channels of the local site
-- (scope local); those of some sites and of the fleet are
-- EventPlanSiteTreeFindings' and EventPlanFleetFindings'.
INSERT INTO notification_events (id, channel_id, key, type, payload, epoch)
SELECT gen_random_uuid(), ch.id,
       'tree.finding:' || f.name || '@' || f.version || '/' || f.advisory_id,
       'tree.finding',
       jsonb_build_object('package', f.name, 'version', f.version, 'advisory', f.advisory,
                          'malicious', f.malicious, 'known_exploited', f.known_exploited,
                          'fixed_in', coalesce(f.fixed_in, '')),
       sqlc.narg(epoch)::bigint
FROM tree_finding_state f
JOIN notification_channels ch ON ch.enabled AND ch.scope = 'local'
WHERE f.site_id = @site AND f.found_at >= now()
  AND upcheck_tree_counted(@dev_mode::text, f.dev, f.malicious, f.withdrawn, f.dismissed)
  AND (f.malicious OR f.known_exploited OR ch.min_epss IS NULL OR f.epss IS NULL OR f.epss >= ch.min_epss)
ON CONFLICT (channel_id, key) DO NOTHING
RETURNING id;
