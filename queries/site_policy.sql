-- A registered site's own update policy (docs/design.md "Many sites"):
-- sites.policy, release.Policy.Text's canonical JSON ('' the default),
-- and its components' policy, which the evaluation reads.

-- name: SitePolicyGet :one
SELECT policy FROM sites WHERE id = @id;

-- name: SitePolicySet :one
-- The policy of a registered site, and the one it replaces; the local
-- site (whose policy is its manifest's): no row.
UPDATE sites s SET policy = @policy
FROM (SELECT o.id, o.policy FROM sites o WHERE o.id = @id::bigint AND o.id <> 1 FOR UPDATE) old
WHERE s.id = old.id
RETURNING old.policy AS before;

-- name: SitePolicies :many
-- The registered sites whose policy is not the default.
SELECT id, policy FROM sites WHERE policy <> '' ORDER BY id;

-- name: ComponentPolicySetSite :execrows
-- Every component of the site offered under policy ('' the default,
-- stored as null as ComponentUpsertMany stores it); rows already under it
-- are left alone. Their results, evaluated under another policy, no
-- longer count (component_state) until evaluated again.
UPDATE components
SET policy = nullif(@policy::text, ''), updated_at = clock_timestamp()
WHERE site_id = @site_id AND policy IS DISTINCT FROM nullif(@policy::text, '');
