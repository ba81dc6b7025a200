-- name: TreeBringsDue :many
-- The lockfile changes whose diff a check reads (docs/npm.md "What a
-- lockfile change brought"): not read yet, or not read by an earlier
-- check (past its bound, a failed fetch), or read with a dependency it
-- adds whose document was not (past the dependency documents' bound, a
-- failed fetch), of versions installed now; the oldest changes first,
-- then by name.
SELECT b.interval_id, b.name, b.version, b.previous, b.installed_at
FROM tree_brings b
JOIN tree_versions v ON v.id = b.interval_id
WHERE (b.state <> 'read' OR upcheck_tree_brings_unread(b.unread_dependencies)) AND v.removed_at IS NULL
ORDER BY b.installed_at, b.name, b.version;

-- name: TreeBringsSave :many
-- Stores what a check read of lockfile changes (one JSON array of
-- store.TreeBrings) in its fenced write; a change read already (but for
-- a dependency whose document was not) is not written over, nor one the
-- history's retention pruned. Returns the changes written.
UPDATE tree_brings b
SET state               = x.state,
    unread              = x.unread,
    compared            = x.compared,
    signals             = coalesce(x.signals, '[]'),
    unread_dependencies = coalesce(x.unread_dependencies, '[]'),
    read_at             = clock_timestamp(),
    epoch               = @epoch
FROM jsonb_to_recordset(@changes::jsonb) AS x(interval_id bigint, state text, unread text, compared text, signals jsonb,
                                              unread_dependencies jsonb)
WHERE b.interval_id = x.interval_id AND (b.state <> 'read' OR upcheck_tree_brings_unread(b.unread_dependencies))
RETURNING b.interval_id;

-- name: TreeBringsOfPackage :many
-- What the lockfile changes to a package on @site brought, newest first.
SELECT b.interval_id, b.version, b.previous, b.installed_at, b.state, b.unread, b.compared, b.signals::text AS signals,
       b.unread_dependencies::text AS unread_dependencies, b.read_at
FROM tree_brings b
JOIN tree_versions v ON v.id = b.interval_id
WHERE v.site_id = @site AND b.name = @name
ORDER BY b.installed_at DESC, b.version
LIMIT @lim;

-- name: EventPlanTreeBrings :many
-- One trust_downgrade event per channel and signal of the lockfile
-- changes @ids (written earlier in the transaction), as an offered
-- update's signals are told (EventPlan): keyed by the package, the
-- version, the signal's kind and what it names (a script's text by its
-- hash), so that each is told once per channel, whoever writes it. Only
-- @site's changes are told (the channels are the local site's:
-- docs/design.md 4b).
INSERT INTO notification_events (id, channel_id, key, type, payload, epoch)
SELECT gen_random_uuid(), ch.id,
       'trust_downgrade:tree:' || b.name || '@' || b.version || '/' || (s->>'kind')
           || coalesce('/' || nullif(s->'args'->>'name', ''), '') || coalesce('@' || (s->'args'->>'sha256'), ''),
       'trust_downgrade',
       jsonb_build_object('component', jsonb_build_object('code', '', 'name', b.name, 'installed', b.version),
                          'package', b.name, 'kind', s->>'kind', 'version', b.version, 'compared', b.compared,
                          'tree', true, 'installed_at', b.installed_at, 'signal', s),
       sqlc.narg(epoch)::bigint
FROM tree_brings b
JOIN tree_versions v ON v.id = b.interval_id AND v.site_id = @site
CROSS JOIN LATERAL jsonb_array_elements(b.signals) AS s
JOIN notification_channels ch ON ch.enabled AND upcheck_channel_sees(ch.scope, ch.id, @site)
WHERE b.interval_id = ANY (@ids::bigint[])
ON CONFLICT (channel_id, key) DO NOTHING
RETURNING id;
