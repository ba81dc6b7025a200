-- A channel's sites (migrations/00027_notification_sites.sql,
-- docs/notifications.md "Sites"): the sites of a channel of some sites,
-- and the tree events of the registered sites.

-- name: ChannelSitesAdd :exec
-- The sites of a channel of some sites, written with the channel.
INSERT INTO notification_channel_sites (channel_id, site_id)
SELECT @channel_id::bigint, unnest(@sites::bigint[])
ON CONFLICT DO NOTHING;

-- name: ChannelsBeyondLocal :one
-- Whether an enabled channel is of some sites or of the fleet: only then
-- are the sites' tree findings planned.
SELECT EXISTS (SELECT 1 FROM notification_channels WHERE enabled AND scope <> 'local')::boolean;

-- name: TreeSitesMoved :many
-- The sites whose tree moved since it was last evaluated, read in the
-- evaluation's transaction before it records the trees evaluated: a
-- registered site's findings are new to it when the fleet first knows
-- them or when its tree (a push) brought them.
SELECT site_id FROM tree_state
WHERE evaluated_hash IS DISTINCT FROM tree_hash
ORDER BY site_id;

-- name: EventPlanSiteTreeFindings :many
-- One tree.finding event per channel of some sites and counted finding
-- (under @dev_mode, upcheck_tree_counted) of a site it is subscribed to,
-- new to that site: new to the fleet in this transaction (found_at), or
-- on a site whose tree moved (@moved, TreeSitesMoved). Keyed by the site,
-- the package version and the advisory ("tree.finding@shop:debug@4.4.2/
-- MAL-1"): once per channel and site, whoever writes it. The payload
-- names the site. EPSS as EventPlanTreeFindings.
-- Two reads, each selective: the findings new in this transaction (on
-- tree_findings, before the view reads their instances), and the moved
-- sites' (the filter reaches the view's per-site rows, by
-- tree_packages_site_name); as one OR, every finding's instances in
-- the fleet would be read at each push.
WITH fresh AS (
    SELECT f.site_id, f.name, f.version, f.advisory_id, f.advisory, f.malicious, f.known_exploited, f.fixed_in, f.epss
    FROM tree_finding_state f
    WHERE f.found_at >= now()
      AND upcheck_tree_counted(@dev_mode::text, f.dev, f.malicious, f.withdrawn, f.dismissed)
    UNION
    SELECT f.site_id, f.name, f.version, f.advisory_id, f.advisory, f.malicious, f.known_exploited, f.fixed_in, f.epss
    FROM tree_finding_state f
    WHERE f.site_id = ANY (@moved::bigint[])
      AND upcheck_tree_counted(@dev_mode::text, f.dev, f.malicious, f.withdrawn, f.dismissed)
)
INSERT INTO notification_events (id, channel_id, key, type, payload, epoch)
SELECT gen_random_uuid(), ch.id,
       'tree.finding@' || s.name || ':' || f.name || '@' || f.version || '/' || f.advisory_id,
       'tree.finding',
       jsonb_build_object('package', f.name, 'version', f.version, 'advisory', f.advisory,
                          'malicious', f.malicious, 'known_exploited', f.known_exploited,
                          'fixed_in', coalesce(f.fixed_in, ''), 'site', s.name),
       sqlc.narg(epoch)::bigint
FROM fresh f
JOIN sites s ON s.id = f.site_id
JOIN notification_channel_sites cs ON cs.site_id = f.site_id
JOIN notification_channels ch ON ch.id = cs.channel_id AND ch.enabled AND ch.scope = 'sites'
WHERE f.malicious OR f.known_exploited OR ch.min_epss IS NULL OR f.epss IS NULL OR f.epss >= ch.min_epss
ON CONFLICT (channel_id, key) DO NOTHING
RETURNING id;

-- name: EventPlanFleetFindings :many
-- The fleet digest: for each channel of the fleet, one fleet.finding
-- event per finding (a package version and an advisory) naming the sites
-- new to it in this planning (the findings EventPlanSiteTreeFindings
-- reads), not one per site. The sites told are remembered
-- (notification_fleet_told), and the event is keyed by the finding and
-- the hash of the sites it names: a planning again after a crash finds
-- the same sites and the same key; after a commit, the sites are told and
-- nothing is queued. The payload names the first 100 sites by name and
-- counts them all (site_count).
WITH fresh AS (
    SELECT f.site_id, f.name, f.version, f.advisory_id, f.malicious, f.known_exploited, f.epss
    FROM tree_finding_state f
    WHERE f.found_at >= now()
      AND upcheck_tree_counted(@dev_mode::text, f.dev, f.malicious, f.withdrawn, f.dismissed)
    UNION
    SELECT f.site_id, f.name, f.version, f.advisory_id, f.malicious, f.known_exploited, f.epss
    FROM tree_finding_state f
    WHERE f.site_id = ANY (@moved::bigint[])
      AND upcheck_tree_counted(@dev_mode::text, f.dev, f.malicious, f.withdrawn, f.dismissed)
),
told AS (
    INSERT INTO notification_fleet_told (channel_id, name, version, advisory_id, site_id)
    SELECT ch.id, f.name, f.version, f.advisory_id, f.site_id
    FROM fresh f
    JOIN notification_channels ch ON ch.enabled AND ch.scope = 'fleet'
    WHERE f.malicious OR f.known_exploited OR ch.min_epss IS NULL OR f.epss IS NULL OR f.epss >= ch.min_epss
    ON CONFLICT DO NOTHING
    RETURNING channel_id, name, version, advisory_id, site_id
),
digest AS (
    SELECT t.channel_id, t.name, t.version, t.advisory_id,
           array_agg(s.name ORDER BY s.name)::text[] AS sites,
           array_agg(t.site_id ORDER BY t.site_id)::bigint[] AS site_ids
    FROM told t
    JOIN sites s ON s.id = t.site_id
    GROUP BY t.channel_id, t.name, t.version, t.advisory_id
)
INSERT INTO notification_events (id, channel_id, key, type, payload, epoch)
SELECT gen_random_uuid(), d.channel_id,
       'fleet.finding:' || d.name || '@' || d.version || '/' || d.advisory_id || '#' ||
           encode(sha256(convert_to(array_to_string(d.site_ids, ','), 'UTF8')), 'hex'),
       'fleet.finding',
       jsonb_build_object('package', d.name, 'version', d.version, 'advisory', f.advisory,
                          'malicious', f.malicious, 'known_exploited', f.known_exploited,
                          'fixed_in', coalesce(f.fixed_in, ''),
                          'sites', to_jsonb(d.sites[1:100]), 'site_count', cardinality(d.sites)),
       sqlc.narg(epoch)::bigint
FROM digest d
JOIN tree_findings f ON f.name = d.name AND f.version = d.version AND f.advisory_id = d.advisory_id
ON CONFLICT (channel_id, key) DO NOTHING
RETURNING id;
