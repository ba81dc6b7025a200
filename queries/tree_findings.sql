-- name: TreeEvaluationDue :one
-- The feeds' version now beside the one the fleet's findings were
-- matched at, and whether a site's tree moved since its versions were
-- matched (tree_state.evaluated_hash): the evaluation runs again when
-- either did. No row: no site's tree was ever read.
SELECT i.version AS intel_version, e.intel_version AS evaluated_intel_version, e.evaluated_at,
       EXISTS (SELECT 1 FROM tree_state s WHERE s.evaluated_hash IS DISTINCT FROM s.tree_hash) AS trees_moved
FROM intel_state i
LEFT JOIN tree_evaluation e ON true
WHERE EXISTS (SELECT 1 FROM tree_state);

-- name: TreeSitesToEvaluate :many
-- The sites whose trees an evaluation reads, with the tree read: every
-- site's when @every (the feeds moved), else those whose tree moved since
-- their versions were matched.
SELECT site_id, tree_hash
FROM tree_state
WHERE @every::boolean OR evaluated_hash IS DISTINCT FROM tree_hash
ORDER BY site_id;

-- name: TreeVersionsToMatch :many
-- The package versions (name, version) of the sites @sites installs now
-- or installed once (tree_versions, its open intervals and its closed
-- ones), each once: all of them when @every (the feeds moved), else those
-- not matched at the feeds' version yet (tree_matched). A version many
-- sites have is matched once. One a site installs now only as a local
-- package (a workspace's own, link: or file:) is the site's code, not the
-- registry package of its name, and is not matched for it.
SELECT DISTINCT v.name, v.version
FROM tree_versions v
WHERE v.site_id = ANY (@sites::bigint[])
  AND (v.removed_at IS NOT NULL
       OR EXISTS (SELECT 1 FROM tree_packages p
                  WHERE p.site_id = v.site_id AND p.name = v.name AND p.version = v.version
                    AND p.source NOT IN ('link', 'file')))
  AND (@every::boolean OR NOT EXISTS (SELECT 1 FROM tree_matched m WHERE m.name = v.name AND m.version = v.version))
ORDER BY v.name, v.version;

-- name: TreeInstalledVersions :many
-- Every package version some site installs now, once however many sites
-- do; a local package (a workspace's own, link: or file:) is the site's
-- code, not the registry package of its name, and is not asked about.
SELECT DISTINCT name, version FROM tree_packages WHERE source NOT IN ('link', 'file') ORDER BY name, version;

-- name: TreePastVersions :many
-- The versions each site had installed and no longer has (a closed
-- interval of tree_versions, no instance of it installed there now), each
-- interval once: what the look-back reads.
SELECT v.id, v.site_id, v.name, v.version, v.installed_at, v.removed_at::timestamptz AS removed_at
FROM tree_versions v
WHERE v.removed_at IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM tree_packages p WHERE p.site_id = v.site_id AND p.name = v.name AND p.version = v.version)
ORDER BY v.site_id, v.name, v.version, v.installed_at;

-- name: TreeFindingsDeleteGone :exec
-- Deletes the findings of the versions matched (@versions, one JSON
-- array of {name, version}; every version when @every) that the new set
-- (@findings, one JSON array of {name, version, advisory_id}) no longer
-- has, in the evaluation's fenced transaction, before TreeFindingsPut.
DELETE FROM tree_findings f
WHERE (@every::boolean OR EXISTS (SELECT 1 FROM jsonb_array_elements(@versions::jsonb) v
                                WHERE v->>'name' = f.name AND v->>'version' = f.version))
  AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(@findings::jsonb) e
                  WHERE e->>'name' = f.name AND e->>'version' = f.version AND e->>'advisory_id' = f.advisory_id);

-- name: TreeFindingsPut :exec
-- Writes the given findings (one JSON array): a new one is stamped now,
-- one unchanged keeps its row (and its found_at).
INSERT INTO tree_findings (name, version, advisory_id, advisory, advisory_keys, malicious, known_exploited, epss,
                           severity, fixed_in, withdrawn, epoch)
SELECT i.name, i.version, i.advisory_id, i.advisory, i.advisory_keys, i.malicious, i.known_exploited, i.epss,
       i.severity, i.fixed_in, i.withdrawn, @epoch::bigint
FROM jsonb_populate_recordset(NULL::tree_findings, @findings::jsonb) i
ON CONFLICT (name, version, advisory_id) DO UPDATE
SET advisory = EXCLUDED.advisory, advisory_keys = EXCLUDED.advisory_keys, malicious = EXCLUDED.malicious,
    known_exploited = EXCLUDED.known_exploited, epss = EXCLUDED.epss, severity = EXCLUDED.severity,
    fixed_in = EXCLUDED.fixed_in, withdrawn = EXCLUDED.withdrawn, epoch = EXCLUDED.epoch
WHERE (tree_findings.advisory, tree_findings.withdrawn) IS DISTINCT FROM (EXCLUDED.advisory, EXCLUDED.withdrawn);

-- name: TreeMatchedForgetAll :exec
-- The feeds moved: no version is matched at their new version yet.
DELETE FROM tree_matched;

-- name: TreeMatchedAdd :exec
-- The versions an evaluation matched (@versions, one JSON array of
-- {name, version}).
INSERT INTO tree_matched (name, version)
SELECT v->>'name', v->>'version' FROM jsonb_array_elements(@versions::jsonb) v
ON CONFLICT DO NOTHING;

-- name: TreeSitesEvaluated :exec
-- Marks each site read (@sites, one JSON array of {site_id, tree_hash},
-- the hash in hex) as evaluated at the tree read,
-- only while its tree is still that one: a site whose tree a sync or a
-- push moved meanwhile stays due, and the next evaluation matches what
-- it brought.
UPDATE tree_state s
SET evaluated_hash = s.tree_hash
FROM jsonb_to_recordset(@sites::jsonb) AS x(site_id bigint, tree_hash text)
WHERE s.site_id = x.site_id AND encode(s.tree_hash, 'hex') = x.tree_hash;

-- name: TreeEvaluationSet :one
-- Records what the findings were matched at: the feeds' version and the
-- fleet's trees as they are now (tree_fleet_hash), in the same
-- transaction.
INSERT INTO tree_evaluation (id, tree_hash, intel_version, evaluated_at, epoch)
SELECT true, t.tree_hash, @intel_version::bigint, clock_timestamp(), @epoch::bigint
FROM tree_fleet_hash t
ON CONFLICT (id) DO UPDATE
SET tree_hash = EXCLUDED.tree_hash, intel_version = EXCLUDED.intel_version, evaluated_at = EXCLUDED.evaluated_at,
    epoch = EXCLUDED.epoch
RETURNING evaluated_at;

-- name: TreeExposuresFind :many
-- The look-back, for every site (@every: the feeds moved) or for the
-- sites @sites evaluated (only their trees moved, and so only their
-- versions' findings and intervals: another site's versions were matched
-- before): an interval of tree_versions closed
-- (a version the site had installed and no longer has) whose version a
-- malicious or exploited advisory names (tree_findings, not withdrawn:
-- the versions installed once are matched as those installed now), one
-- row per interval and advisory, written once; returns those new now,
-- which the caller audits and notifies in the same transaction. (Read
-- for every site, a push's evaluation took 6.8 s at 10,000 sites:
-- docs/performance.md "The fleet".)
INSERT INTO tree_exposures (site_id, interval_id, name, version, advisory_id, advisory, malicious, known_exploited,
                            installed_at, removed_at, epoch)
SELECT v.site_id, v.id, v.name, v.version, f.advisory_id, f.advisory, f.malicious, f.known_exploited,
       v.installed_at, v.removed_at, @epoch::bigint
FROM tree_findings f
JOIN tree_versions v ON v.name = f.name AND v.version = f.version AND v.removed_at IS NOT NULL
WHERE (f.malicious OR f.known_exploited) AND NOT f.withdrawn
  AND (@every::boolean OR v.site_id = ANY (@sites::bigint[]))
  AND NOT EXISTS (SELECT 1 FROM tree_packages p WHERE p.site_id = v.site_id AND p.name = v.name AND p.version = v.version)
ORDER BY v.site_id, v.name, v.version, v.installed_at, f.advisory_id
ON CONFLICT (interval_id, advisory_id) DO NOTHING
RETURNING id, site_id, name, version, advisory_id, malicious, known_exploited, installed_at, removed_at;

-- name: EventPlanTreeExposed :many
-- One tree.exposed event per channel and new exposure (ids), keyed by the
-- package version, the advisory and the interval's start: once, whoever
-- writes it. A channel is told of the exposures of the sites it sees
-- (upcheck_channel_sees); one of some sites or of the fleet is told the
-- site too, in its payload and its key ("tree.exposed@shop:…"), a local
-- channel as before sites.
INSERT INTO notification_events (id, channel_id, key, type, payload, epoch)
SELECT gen_random_uuid(), ch.id,
       'tree.exposed' || CASE WHEN ch.scope = 'local' THEN '' ELSE '@' || s.name END || ':' ||
           x.name || '@' || x.version || '/' || x.advisory_id || '@' ||
           to_char(x.installed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
       'tree.exposed',
       jsonb_build_object('package', x.name, 'version', x.version, 'advisory', x.advisory,
                          'malicious', x.malicious, 'known_exploited', x.known_exploited,
                          'installed_at', x.installed_at, 'removed_at', x.removed_at)
           || CASE WHEN ch.scope = 'local' THEN '{}'::jsonb ELSE jsonb_build_object('site', s.name) END,
       sqlc.narg(epoch)::bigint
FROM tree_exposures x
JOIN sites s ON s.id = x.site_id
JOIN notification_channels ch ON ch.enabled AND upcheck_channel_sees(ch.scope, ch.id, x.site_id)
WHERE x.id = ANY (@ids::bigint[])
ON CONFLICT (channel_id, key) DO NOTHING
RETURNING id;

-- name: TreeExposureList :many
-- The look-back's findings, newest first.
SELECT id, name, version, advisory_id, advisory, malicious, known_exploited, installed_at, removed_at, found_at
FROM tree_exposures
WHERE site_id = @site
ORDER BY found_at DESC, id DESC
LIMIT @max_rows::integer;

-- name: TreeFindingList :many
-- The tree's findings the pages show under the setting (dev_mode:
-- readmodel.DevMode), with what counting reads (upcheck_tree_counted).
SELECT name, version, advisory_id, advisory, malicious, known_exploited, epss, severity, fixed_in, withdrawn,
       found_at, dev, instances, components, dismissed,
       upcheck_tree_counted(@dev_mode::text, dev, malicious, withdrawn, dismissed) AS counted
FROM tree_finding_state
WHERE site_id = @site AND upcheck_tree_shown(@dev_mode::text, dev, malicious)
ORDER BY malicious DESC, known_exploited DESC, name, version, advisory_id;

-- name: TreeFindingCounts :one
-- How many tree findings count under the setting (upcheck_tree_counted,
-- the one definition), and how many are shown apart as development ones.
SELECT count(*) FILTER (WHERE upcheck_tree_counted(@dev_mode::text, dev, malicious, withdrawn, dismissed))::integer AS counted,
       count(*) FILTER (WHERE dev AND NOT malicious AND NOT withdrawn AND NOT dismissed
                          AND @dev_mode::text = 'separate')::integer AS dev_apart,
       count(DISTINCT (name, version)) FILTER (WHERE upcheck_tree_counted(@dev_mode::text, dev, malicious, withdrawn, dismissed))::integer AS packages
FROM tree_finding_state
WHERE site_id = @site;

-- name: TreeFindingsOfInstances :many
-- Each installed instance of the named package with its findings (joined
-- on name and version, as tree_finding_state reads them): the
-- per-instance read, with what each finding counts for under the setting
-- @dev_mode (upcheck_tree_counted, upcheck_tree_shown); finding_dev:
-- every instance of the version is installed only for development.
SELECT p.id AS instance_id, p.name, p.version, p.dev, p.dev_only, p.via, p.components,
       f.advisory_id, f.advisory, f.malicious, f.known_exploited, f.withdrawn, f.dismissed,
       f.severity, f.epss, f.fixed_in, f.dev AS finding_dev,
       upcheck_tree_counted(@dev_mode::text, f.dev, f.malicious, f.withdrawn, f.dismissed) AS counted,
       upcheck_tree_shown(@dev_mode::text, f.dev, f.malicious) AS shown
FROM tree_packages p
JOIN tree_finding_state f ON f.site_id = p.site_id AND f.name = p.name AND f.version = p.version
WHERE p.site_id = @site AND p.name = @name::text AND p.source NOT IN ('link', 'file')
ORDER BY p.id, f.advisory_id;

-- name: TreeDismissalEnd :many
-- Ends the site's standing tree dismissal of an advisory for the package
-- ('': the advisory wherever it is in the site's tree), keeping it as
-- history.
UPDATE advisory_dismissals
SET ended_at = clock_timestamp(), ended_how = @how::text
WHERE site_id = @site::bigint AND component_code = '' AND package = @package::text
  AND advisory_id = @advisory_id::text AND ended_at IS NULL
RETURNING id, reason;

-- name: TreeDismissalCreate :one
-- Dismisses on the site the advisory as a tree finding of a version it
-- installs (or a look-back finding of its) lists it (its fingerprint),
-- for the package ('': wherever it is in the site's tree). No row comes
-- back when none of the site's lists such an advisory (for that
-- package).
INSERT INTO advisory_dismissals (site_id, component_code, package, advisory_id, user_id, user_email, reason, expires_at,
                                 severity, affected, fixed_in)
SELECT @site::bigint, '', @package::text, f.advisory_id, sqlc.narg(user_id)::bigint,
       (SELECT u.email FROM users u WHERE u.id = sqlc.narg(user_id)::bigint),
       @reason::text, sqlc.narg(expires_at)::timestamptz,
       coalesce(f.advisory->>'severity', ''), coalesce(f.advisory->>'affected', ''), coalesce(f.advisory->>'fixed_in', '')
FROM (SELECT t.name, t.version, t.advisory_id, t.advisory FROM tree_findings t
      WHERE EXISTS (SELECT 1 FROM tree_packages p
                    WHERE p.site_id = @site::bigint AND p.name = t.name AND p.version = t.version)
      UNION ALL
      SELECT x.name, x.version, x.advisory_id, x.advisory FROM tree_exposures x WHERE x.site_id = @site::bigint) f
WHERE upcheck_dismissal_names(@advisory_id::text, f.advisory)
  AND (@package::text = '' OR f.name = @package::text)
ORDER BY (f.advisory_id = @advisory_id::text) DESC, f.name, f.version
LIMIT 1
RETURNING id, advisory_id, dismissed_at, user_email, severity, affected, fixed_in;

-- name: TreeAttention :many
-- What in the tree needs attention under the setting
-- (upcheck_tree_attention, the one definition).
SELECT a.kind::text AS kind, a.name::text AS name, a.version::text AS version, a.advisory_id::text AS advisory_id,
       a.malicious::boolean AS malicious, a.dev::boolean AS dev
FROM upcheck_tree_attention(@site::bigint, @dev_mode::text) a
ORDER BY array_position(ARRAY['malicious', 'exposed', 'known_exploited', 'vulnerable_no_fix', 'vulnerable'], a.kind::text),
         a.name, a.version, a.advisory_id;
