-- The fleet's roll-up (docs/design.md "The fleet"): every site the
-- principal may see (@limited false: every site; true: those of
-- @site_ids), with its counts (fleet_site_counts, under the setting
-- @dev_mode), and the impact of an advisory or a package on the sites.

-- name: FleetPageAttention :many
-- One page of the sites, most urgent first (malicious, then every item,
-- then by id): the Fleet page's first order, read by the index
-- fleet_site_counts_attention from its first row. The filters are
-- readmodel.FleetFilters; stale is the sites' rule (queries/sites.sql
-- SiteList: a registered site whose last push, or before its first its
-- registration, is older than @stale_seconds on the database clock).
SELECT s.id, s.name, s.owner, s.pushed_at, c.tree, c.packages, c.malicious, c.exposed, c.known_exploited,
       c.vulnerable_no_fix, c.vulnerable, c.total,
       (s.id <> 1 AND coalesce(s.pushed_at, s.created_at) <= clock_timestamp() - make_interval(secs => @stale_seconds::float8))::boolean AS stale,
       k.checked AS components_checked, k.components, k.updates AS component_updates, k.security AS component_security,
       k.vulnerable AS component_vulnerable, k.trust AS component_trust, k.malicious AS component_malicious,
       k.known_exploited AS component_known_exploited
FROM fleet_site_counts c
JOIN sites s ON s.id = c.site_id
JOIN fleet_site_components k ON k.site_id = c.site_id
WHERE c.dev_mode = @dev_mode::text
  AND (NOT @limited::boolean OR c.site_id = ANY (@site_ids::bigint[]))
  AND (@search::text = '' OR strpos(lower(s.name), lower(@search)) > 0 OR strpos(lower(s.owner), lower(@search)) > 0)
  AND (@filter::text = ''
       OR (@filter = 'malicious' AND (c.malicious > 0 OR k.malicious > 0))
       OR (@filter = 'updates' AND k.updates > 0)
       OR (@filter = 'security' AND k.security > 0)
       OR (@filter = 'trust' AND k.trust > 0)
       OR (@filter = 'stale' AND s.id <> 1
           AND coalesce(s.pushed_at, s.created_at) <= clock_timestamp() - make_interval(secs => @stale_seconds::float8)))
ORDER BY c.malicious DESC, c.total DESC, c.site_id
LIMIT @row_limit::bigint OFFSET @row_offset::bigint;

-- name: FleetPageSorted :many
-- FleetPageAttention in another order (readmodel.FleetSorts): by name,
-- by last push (the oldest first, never pushed first of all), or by a
-- count, the highest first; then by name.
SELECT s.id, s.name, s.owner, s.pushed_at, c.tree, c.packages, c.malicious, c.exposed, c.known_exploited,
       c.vulnerable_no_fix, c.vulnerable, c.total,
       (s.id <> 1 AND coalesce(s.pushed_at, s.created_at) <= clock_timestamp() - make_interval(secs => @stale_seconds::float8))::boolean AS stale,
       k.checked AS components_checked, k.components, k.updates AS component_updates, k.security AS component_security,
       k.vulnerable AS component_vulnerable, k.trust AS component_trust, k.malicious AS component_malicious,
       k.known_exploited AS component_known_exploited
FROM fleet_site_counts c
JOIN sites s ON s.id = c.site_id
JOIN fleet_site_components k ON k.site_id = c.site_id
WHERE c.dev_mode = @dev_mode::text
  AND (NOT @limited::boolean OR c.site_id = ANY (@site_ids::bigint[]))
  AND (@search::text = '' OR strpos(lower(s.name), lower(@search)) > 0 OR strpos(lower(s.owner), lower(@search)) > 0)
  AND (@filter::text = ''
       OR (@filter = 'malicious' AND (c.malicious > 0 OR k.malicious > 0))
       OR (@filter = 'updates' AND k.updates > 0)
       OR (@filter = 'security' AND k.security > 0)
       OR (@filter = 'trust' AND k.trust > 0)
       OR (@filter = 'stale' AND s.id <> 1
           AND coalesce(s.pushed_at, s.created_at) <= clock_timestamp() - make_interval(secs => @stale_seconds::float8)))
ORDER BY CASE WHEN @sort::text = 'pushed' THEN s.pushed_at END ASC NULLS FIRST,
         CASE @sort WHEN 'packages' THEN c.packages WHEN 'malicious' THEN c.malicious
                    WHEN 'exploited' THEN c.known_exploited WHEN 'vulnerable' THEN c.vulnerable + c.vulnerable_no_fix
                    WHEN 'attention' THEN c.total WHEN 'components' THEN k.components WHEN 'updates' THEN k.updates
                    WHEN 'security' THEN k.security WHEN 'components_vulnerable' THEN k.vulnerable
                    WHEN 'trust' THEN k.trust END DESC,
         -- A site's malicious or exploited components after its tree's.
         CASE @sort WHEN 'malicious' THEN k.malicious WHEN 'exploited' THEN k.known_exploited END DESC,
         s.name
LIMIT @row_limit::bigint OFFSET @row_offset::bigint;

-- name: FleetSummary :one
-- The totals across the sites: how many, how many with a tree read, stale,
-- with a malicious package (in its tree or a component), with anything
-- that needs attention, and the sums of their counts.
SELECT count(*)::bigint                                AS sites,
       count(*) FILTER (WHERE c.tree)::bigint          AS checked,
       count(*) FILTER (WHERE s.id <> 1 AND coalesce(s.pushed_at, s.created_at)
                        <= clock_timestamp() - make_interval(secs => @stale_seconds::float8))::bigint AS stale,
       count(*) FILTER (WHERE c.malicious > 0 OR k.malicious > 0)::bigint AS sites_malicious,
       count(*) FILTER (WHERE c.total > 0)::bigint     AS sites_attention,
       coalesce(sum(c.packages), 0)::bigint            AS packages,
       coalesce(sum(c.malicious), 0)::bigint           AS malicious,
       coalesce(sum(c.exposed), 0)::bigint             AS exposed,
       coalesce(sum(c.known_exploited), 0)::bigint     AS known_exploited,
       coalesce(sum(c.vulnerable_no_fix), 0)::bigint   AS vulnerable_no_fix,
       coalesce(sum(c.vulnerable), 0)::bigint          AS vulnerable,
       coalesce(sum(c.total), 0)::bigint               AS total,
       min(m.read_at)                                  AS malware_read_at,
       min(x.read_at)                                  AS exploited_read_at,
       -- The components' (fleet_site_components): the sites whose every
       -- component was read, with an update offered, with a security
       -- update, and the sums of their counts.
       count(*) FILTER (WHERE k.checked)::bigint          AS components_checked,
       count(*) FILTER (WHERE k.updates > 0)::bigint      AS sites_updates,
       count(*) FILTER (WHERE k.security > 0)::bigint     AS sites_security,
       coalesce(sum(k.components), 0)::bigint             AS components,
       coalesce(sum(k.updates), 0)::bigint                AS component_updates,
       coalesce(sum(k.security), 0)::bigint               AS component_security,
       coalesce(sum(k.vulnerable), 0)::bigint             AS component_vulnerable,
       coalesce(sum(k.trust), 0)::bigint                  AS component_trust,
       coalesce(sum(k.malicious), 0)::bigint              AS component_malicious,
       coalesce(sum(k.known_exploited), 0)::bigint        AS component_known_exploited
FROM fleet_site_counts c
JOIN sites s ON s.id = c.site_id
JOIN fleet_site_components k ON k.site_id = c.site_id
-- Joined LEFT only so that sqlc types the columns as nullable, which
-- they are (as the summary's).
-- OFFSET 0 keeps each a subquery read once: pulled up, the function
-- would run for every site's row (10,000 reads of the feeds' state).
LEFT JOIN (SELECT upcheck_malware_read_at() AS read_at OFFSET 0) m ON true
LEFT JOIN (SELECT upcheck_exploited_read_at() AS read_at OFFSET 0) x ON true
WHERE c.dev_mode = @dev_mode::text
  AND (NOT @limited::boolean OR c.site_id = ANY (@site_ids::bigint[]));

-- name: FleetComponentsRefresh :exec
-- Counts the components of the sites named again, in one statement
-- (migrations/00029_fleet_components.sql: lock their rows in site order,
-- then count).
SELECT upcheck_fleet_components_refresh(@site_ids::bigint[]);

-- name: FleetImpactAdvisoryNow :many
-- The installed instances the advisory (its id or an alias, upper-cased:
-- tree_findings.advisory_keys) is a finding of, withdrawn ones aside, on
-- the sites, by site name, version and place, with what clears it there
-- (tree_fixes, the last check's decision; null: none decided). At most
-- @row_limit rows.
SELECT s.name AS site, s.owner, p.name, p.version, p.id AS instance_id, f.advisory_id, x.fix
FROM tree_findings f
JOIN tree_packages p ON p.name = f.name AND p.version = f.version AND p.source NOT IN ('link', 'file')
JOIN sites s ON s.id = p.site_id
LEFT JOIN tree_fixes x ON x.site_id = p.site_id AND x.package_id = p.id AND x.advisory_id = f.advisory_id
WHERE f.advisory_keys @> ARRAY[@advisory_key::text] AND NOT f.withdrawn
  AND (NOT @limited::boolean OR p.site_id = ANY (@site_ids::bigint[]))
ORDER BY s.name, p.name, p.version, p.id
LIMIT @row_limit::bigint;

-- name: FleetImpactAdvisoryEver :many
-- Every interval of a version the advisory names that a site installed
-- (tree_versions: installed now, or removed since, within the history
-- kept; the look-back's copies, tree_exposures, where the history was
-- pruned), by site name, version and start, with the versions of the
-- package the site runs now. At most @row_limit rows. The look-back's
-- findings are found by their advisory's keys (index
-- tree_exposures_keys), @advisory_key upper-cased as they are.
WITH hit AS (
    SELECT DISTINCT f.name, f.version FROM tree_findings f
    WHERE f.advisory_keys @> ARRAY[@advisory_key::text] AND NOT f.withdrawn
    UNION
    SELECT DISTINCT x.name, x.version FROM tree_exposures x
    WHERE upcheck_advisory_keys_of(x.advisory) @> ARRAY[@advisory_key::text]
      AND (NOT @limited::boolean OR x.site_id = ANY (@site_ids::bigint[]))
),
spans AS (
    SELECT v.site_id, v.name, v.version, v.installed_at, v.removed_at
    FROM hit h JOIN tree_versions v ON v.name = h.name AND v.version = h.version
    WHERE NOT @limited::boolean OR v.site_id = ANY (@site_ids::bigint[])
    UNION
    SELECT x.site_id, x.name, x.version, x.installed_at, x.removed_at
    FROM tree_exposures x
    WHERE upcheck_advisory_keys_of(x.advisory) @> ARRAY[@advisory_key::text]
      AND (NOT @limited::boolean OR x.site_id = ANY (@site_ids::bigint[]))
)
SELECT s.name AS site, s.owner, sp.name, sp.version, sp.installed_at, sp.removed_at,
       coalesce((SELECT array_agg(DISTINCT p.version ORDER BY p.version) FROM tree_packages p
                 WHERE p.site_id = sp.site_id AND p.name = sp.name), '{}')::text[] AS runs
FROM spans sp
JOIN sites s ON s.id = sp.site_id
ORDER BY s.name, sp.name, sp.version, sp.installed_at
LIMIT @row_limit::bigint;

-- name: FleetImpactAdvisoryCounts :one
-- How many sites the advisory affects now and how many ever did (as
-- FleetImpactAdvisoryNow and FleetImpactAdvisoryEver read them).
WITH hit AS (
    SELECT f.name, f.version FROM tree_findings f
    WHERE f.advisory_keys @> ARRAY[@advisory_key::text] AND NOT f.withdrawn
)
SELECT (SELECT count(DISTINCT p.site_id) FROM hit h
        JOIN tree_packages p ON p.name = h.name AND p.version = h.version AND p.source NOT IN ('link', 'file')
        WHERE NOT @limited::boolean OR p.site_id = ANY (@site_ids::bigint[]))::bigint AS now,
       (SELECT count(*) FROM (
            SELECT v.site_id FROM hit h JOIN tree_versions v ON v.name = h.name AND v.version = h.version
            WHERE NOT @limited::boolean OR v.site_id = ANY (@site_ids::bigint[])
            UNION
            SELECT x.site_id FROM tree_exposures x
            WHERE upcheck_advisory_keys_of(x.advisory) @> ARRAY[@advisory_key::text]
              AND (NOT @limited::boolean OR x.site_id = ANY (@site_ids::bigint[]))) e)::bigint AS ever;

-- name: FleetPackageVersions :many
-- The versions of a package any site installs or installed (within the
-- history kept): what a range is matched against (in Go, by npm's
-- reading of a range).
SELECT DISTINCT version FROM tree_versions WHERE name = @name::text
UNION
SELECT DISTINCT version FROM tree_packages WHERE name = @name::text;

-- name: FleetImpactPackageNow :many
-- The installed instances of the package at one of @versions on the
-- sites, by site name, version and place, with what clears each of its
-- findings there (tree_fixes, a JSON array of {advisory_id, fix}).
SELECT s.name AS site, s.owner, p.name, p.version, p.id AS instance_id,
       coalesce((SELECT jsonb_agg(jsonb_build_object('advisory_id', x.advisory_id, 'fix', x.fix) ORDER BY x.advisory_id)
                 FROM tree_fixes x WHERE x.site_id = p.site_id AND x.package_id = p.id), '[]')::jsonb AS fixes
FROM tree_packages p
JOIN sites s ON s.id = p.site_id
WHERE p.name = @name::text AND p.version = ANY (@versions::text[])
  AND (NOT @limited::boolean OR p.site_id = ANY (@site_ids::bigint[]))
ORDER BY s.name, p.version, p.id
LIMIT @row_limit::bigint;

-- name: FleetImpactPackageEver :many
-- Every interval of the package at one of @versions a site installed
-- (tree_versions), by site name, version and start, with the versions of
-- it the site runs now.
SELECT s.name AS site, s.owner, v.name, v.version, v.installed_at, v.removed_at,
       coalesce((SELECT array_agg(DISTINCT p.version ORDER BY p.version) FROM tree_packages p
                 WHERE p.site_id = v.site_id AND p.name = v.name), '{}')::text[] AS runs
FROM tree_versions v
JOIN sites s ON s.id = v.site_id
WHERE v.name = @name::text AND v.version = ANY (@versions::text[])
  AND (NOT @limited::boolean OR v.site_id = ANY (@site_ids::bigint[]))
ORDER BY s.name, v.version, v.installed_at
LIMIT @row_limit::bigint;

-- name: FleetImpactPackageCounts :one
-- How many sites install the package at one of @versions now, and how many
-- ever did.
SELECT (SELECT count(DISTINCT p.site_id) FROM tree_packages p
        WHERE p.name = @name::text AND p.version = ANY (@versions::text[])
          AND (NOT @limited::boolean OR p.site_id = ANY (@site_ids::bigint[])))::bigint AS now,
       (SELECT count(DISTINCT v.site_id) FROM tree_versions v
        WHERE v.name = @name::text AND v.version = ANY (@versions::text[])
          AND (NOT @limited::boolean OR v.site_id = ANY (@site_ids::bigint[])))::bigint AS ever;
