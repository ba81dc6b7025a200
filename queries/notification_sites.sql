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

-- name: EventPlanSitesNothingNew :exec
-- EventPlanSites' question without its insert, for a check's pipelined
-- write: raises UN001 (store.ErrEventsToQueue) when a channel of some
-- sites or of the fleet sees one of the registered sites' components
-- (@sites[i], @codes[i]) and its result may call for an event
-- (upcheck_sites_nothing_to_queue, migrations/00031_site_notifications.sql).
SELECT upcheck_sites_nothing_to_queue(@sites::bigint[], @codes::text[]);

-- name: RegisteredComponentScope :one
-- Every registered site and every code of their components, for
-- EventPlanSites of a channel added or enabled.
SELECT ARRAY(SELECT id FROM sites WHERE id <> 1 ORDER BY id)::bigint[] AS sites,
       ARRAY(SELECT DISTINCT code FROM components WHERE site_id <> 1 ORDER BY code)::text[] AS codes;

-- name: EventPlanSites :many
-- The events of registered sites' components (docs/notifications.md
-- "Sites"): the facts EventPlan reads of the local site's components
-- (keep the two in step), of the components of @sites and @codes. A
-- channel of some sites gets
-- one event per fact of each site it is subscribed to, naming the site
-- ("site": its name) and keyed by it ("update.available@shop:npm:debug@
-- 4.4.3"): once per channel, site and fact. A channel of the fleet gets
-- the digest: one event per fact naming the sites new to it in this
-- planning (the first 100 by name in "sites", all counted in
-- "site_count"), remembered in notification_fleet_component_told and
-- keyed by the fact and the hash of those sites, so that planning again
-- finds the same key or nothing. A fact's payload is the first site's
-- by name; a digest's component names no installed version when its
-- sites install different ones. The local site's components are
-- EventPlan's (its channels, as before).
-- The components read are those of the sites @sites whose code is among
-- @codes (store.Tx.EventPlanSites passes the written components' sites
-- and codes, or every registered site and code): a superset of the
-- components written, planned as any write of theirs would plan them,
-- by filters on the view's keys that reach its rows by their index.
WITH facts AS MATERIALIZED (
    SELECT cs.site_id, cs.installed_version AS installed, 'malicious_package' AS type,
           cs.code || '@' || cs.installed_version || '/' || (a->>'id') AS subject,
           jsonb_build_object('component', jsonb_build_object('code', cs.code, 'name', cs.name, 'installed', cs.installed_version),
                              'package', cs.package, 'advisory', a - 'no_fix') AS payload,
           NULL::float8 AS epss
    FROM component_state cs
    CROSS JOIN LATERAL jsonb_array_elements(cs.open_advisories) AS a
    WHERE cs.malicious AND coalesce((a->>'malicious')::boolean, false)
      AND cs.site_id = ANY (@sites::bigint[]) AND cs.code = ANY (@codes::text[]) AND cs.site_id <> 1
    UNION ALL
    SELECT cs.site_id, cs.installed_version, 'advisory.exploited',
           cs.code || '/' || (a->>'id'),
           jsonb_build_object('component', jsonb_build_object('code', cs.code, 'name', cs.name, 'installed', cs.installed_version),
                              'advisory', a - 'no_fix'),
           NULL
    FROM component_state cs
    CROSS JOIN LATERAL jsonb_array_elements(cs.open_advisories) AS a
    WHERE cs.known_exploited AND coalesce((a->>'known_exploited')::boolean, false)
      AND NOT coalesce((a->>'malicious')::boolean, false)
      AND cs.site_id = ANY (@sites::bigint[]) AND cs.code = ANY (@codes::text[]) AND cs.site_id <> 1
    UNION ALL
    SELECT cs.site_id, cs.installed_version, 'security_update.available',
           cs.code || '@' || r.security_version,
           jsonb_build_object('component', jsonb_build_object('code', cs.code, 'name', cs.name, 'installed', cs.installed_version),
                              'version', r.security_version,
                              'installable', cs.update_version IS NOT DISTINCT FROM r.security_version,
                              'severity', r.evaluation->'security_release'->>'severity',
                              'summary', r.evaluation->'security_release'->>'summary',
                              'url', r.evaluation->'security_release'->>'url',
                              'fix_version', r.fix_version,
                              'advisories', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', a->>'id', 'aliases', coalesce(a->'aliases', '[]'::jsonb))), '[]'::jsonb)
                                             FROM jsonb_array_elements(cs.open_advisories) AS a
                                             WHERE NOT coalesce((a->>'no_fix')::boolean, false))),
           NULL
    FROM component_state cs
    JOIN component_results r ON r.site_id = cs.site_id AND r.code = cs.code
    WHERE cs.security AND r.security_version IS NOT NULL
      AND cs.site_id = ANY (@sites::bigint[]) AND cs.code = ANY (@codes::text[]) AND cs.site_id <> 1
    UNION ALL
    SELECT cs.site_id, cs.installed_version, 'advisory.unfixed',
           cs.code || '@' || cs.installed_version || '/' || (a->>'id'),
           jsonb_build_object('component', jsonb_build_object('code', cs.code, 'name', cs.name, 'installed', cs.installed_version),
                              'advisory', a - 'no_fix'),
           (a->'epss'->>'score')::float8
    FROM component_state cs
    CROSS JOIN LATERAL jsonb_array_elements(cs.open_advisories) AS a
    WHERE cs.vulnerable_no_fix AND (a->>'no_fix')::boolean
      AND NOT coalesce((a->>'known_exploited')::boolean, false)
      AND NOT coalesce((a->>'malicious')::boolean, false)
      AND cs.site_id = ANY (@sites::bigint[]) AND cs.code = ANY (@codes::text[]) AND cs.site_id <> 1
    UNION ALL
    SELECT cs.site_id, cs.installed_version, 'deprecated',
           cs.code || '@' || cs.installed_version,
           jsonb_build_object('component', jsonb_build_object('code', cs.code, 'name', cs.name, 'installed', cs.installed_version),
                              'package', cs.registry_facts->>'package', 'message', cs.deprecated),
           NULL
    FROM component_state cs
    WHERE cs.deprecated IS NOT NULL
      AND cs.site_id = ANY (@sites::bigint[]) AND cs.code = ANY (@codes::text[]) AND cs.site_id <> 1
    UNION ALL
    SELECT cs.site_id, cs.installed_version, 'trust_downgrade',
           cs.code || '@' || cs.provenance_lost || '/provenance_lost',
           jsonb_build_object('component', jsonb_build_object('code', cs.code, 'name', cs.name, 'installed', cs.installed_version),
                              'package', cs.registry_facts->>'package', 'kind', 'provenance_lost', 'version', cs.provenance_lost),
           NULL
    FROM component_state cs
    WHERE cs.provenance_lost IS NOT NULL
      AND cs.site_id = ANY (@sites::bigint[]) AND cs.code = ANY (@codes::text[]) AND cs.site_id <> 1
    UNION ALL
    SELECT cs.site_id, cs.installed_version, 'trust_downgrade',
           cs.code || '@' || cs.new_publisher_version || '/new_publisher',
           jsonb_build_object('component', jsonb_build_object('code', cs.code, 'name', cs.name, 'installed', cs.installed_version),
                              'package', cs.registry_facts->>'package', 'kind', 'new_publisher',
                              'version', cs.new_publisher_version, 'account', cs.new_publisher),
           NULL
    FROM component_state cs
    WHERE cs.new_publisher_version IS NOT NULL
      AND cs.site_id = ANY (@sites::bigint[]) AND cs.code = ANY (@codes::text[]) AND cs.site_id <> 1
    UNION ALL
    SELECT cs.site_id, cs.installed_version, 'trust_downgrade',
           cs.code || '@' || (s->'args'->>'version') || '/' || (s->>'kind')
               || coalesce('/' || nullif(s->'args'->>'name', ''), '') || coalesce('@' || (s->'args'->>'sha256'), ''),
           jsonb_build_object('component', jsonb_build_object('code', cs.code, 'name', cs.name, 'installed', cs.installed_version),
                              'package', cs.registry_facts->>'package', 'kind', s->>'kind',
                              'version', s->'args'->>'version', 'signal', s),
           NULL
    FROM component_state cs
    CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(cs.registry_facts->'brings') = 'array'
                                                 THEN cs.registry_facts->'brings' ELSE '[]'::jsonb END) AS s
    WHERE cs.update_available
      AND cs.site_id = ANY (@sites::bigint[]) AND cs.code = ANY (@codes::text[]) AND cs.site_id <> 1
    UNION ALL
    SELECT cs.site_id, cs.installed_version, 'update.available',
           cs.code || '@' || cs.update_version,
           jsonb_build_object('component', jsonb_build_object('code', cs.code, 'name', cs.name, 'installed', cs.installed_version),
                              'version', cs.update_version, 'url', cs.release_url),
           NULL
    FROM component_state cs
    WHERE cs.update_available
      AND cs.site_id = ANY (@sites::bigint[]) AND cs.code = ANY (@codes::text[]) AND cs.site_id <> 1
),
named AS MATERIALIZED (
    SELECT f.*, s.name AS site, f.type || ':' || f.subject AS fact
    FROM facts f JOIN sites s ON s.id = f.site_id
),
site_events AS (
    INSERT INTO notification_events (id, channel_id, key, type, payload, epoch)
    SELECT gen_random_uuid(), ch.id, f.type || '@' || f.site || ':' || f.subject, f.type,
           f.payload || jsonb_build_object('site', f.site), sqlc.narg(epoch)::bigint
    FROM named f
    JOIN notification_channel_sites cs ON cs.site_id = f.site_id
    JOIN notification_channels ch ON ch.id = cs.channel_id AND ch.enabled AND ch.scope = 'sites'
         AND (ch.events = 'all' OR f.type <> 'update.available')
         AND (ch.min_epss IS NULL OR f.epss IS NULL OR f.epss >= ch.min_epss)
    WHERE sqlc.narg(channel_id)::bigint IS NULL OR ch.id = sqlc.narg(channel_id)::bigint
    ON CONFLICT (channel_id, key) DO NOTHING
    RETURNING id
),
told AS (
    INSERT INTO notification_fleet_component_told (channel_id, fact, site_id)
    SELECT ch.id, f.fact, f.site_id
    FROM named f
    JOIN notification_channels ch ON ch.enabled AND ch.scope = 'fleet'
         AND (ch.events = 'all' OR f.type <> 'update.available')
         AND (ch.min_epss IS NULL OR f.epss IS NULL OR f.epss >= ch.min_epss)
    WHERE sqlc.narg(channel_id)::bigint IS NULL OR ch.id = sqlc.narg(channel_id)::bigint
    ON CONFLICT DO NOTHING
    RETURNING channel_id, fact, site_id
),
digest AS (
    SELECT t.channel_id, t.fact,
           array_agg(s.name ORDER BY s.name)::text[] AS sites,
           array_agg(t.site_id ORDER BY t.site_id)::bigint[] AS site_ids
    FROM told t
    JOIN sites s ON s.id = t.site_id
    GROUP BY t.channel_id, t.fact
),
fleet_events AS (
    INSERT INTO notification_events (id, channel_id, key, type, payload, epoch)
    SELECT gen_random_uuid(), d.channel_id,
           d.fact || '#' || encode(sha256(convert_to(array_to_string(d.site_ids, ','), 'UTF8')), 'hex'),
           p.type,
           CASE WHEN p.installs = 1 THEN p.payload ELSE p.payload #- '{component,installed}' END
               || jsonb_build_object('sites', to_jsonb(d.sites[1:100]), 'site_count', cardinality(d.sites)),
           sqlc.narg(epoch)::bigint
    FROM digest d
    JOIN LATERAL (SELECT f.type, f.payload,
                         (SELECT count(DISTINCT g.installed) FROM named g
                          WHERE g.fact = d.fact AND g.site_id = ANY (d.site_ids)) AS installs
                  FROM named f
                  WHERE f.fact = d.fact AND f.site_id = ANY (d.site_ids)
                  ORDER BY f.site
                  LIMIT 1) p ON true
    ON CONFLICT (channel_id, key) DO NOTHING
    RETURNING id
)
SELECT id FROM site_events
UNION ALL
SELECT id FROM fleet_events;

-- name: JitOffLocal :one
-- Turns JIT compilation off to the end of the transaction and says what
-- it was (EventPlanSites: its plan's estimate over many sites passes the
-- cost at which PostgreSQL compiles it, which took seconds where the
-- statement takes milliseconds); JitRestoreLocal sets it back.
SELECT current_setting('jit')::text AS was, set_config('jit', 'off', true)::text AS now;

-- name: JitRestoreLocal :exec
SELECT set_config('jit', @was::text, true);
