-- name: DismissalLockComponent :one
-- Serialises the decisions about one component's advisories (a dismissal
-- ends the standing one before it records its own), and says whether the
-- component is installed.
SELECT code FROM components WHERE site_id = @site AND code = @code FOR UPDATE;

-- name: DismissalEnd :many
-- Ends the standing decisions about an advisory ("undone" or "replaced"),
-- keeping them as history: the one under its id, and any that names it by
-- an alias. Returns what ended: nothing when none stood.
UPDATE advisory_dismissals
SET ended_at = clock_timestamp(), ended_how = @how::text
WHERE advisory_dismissals.site_id = @site AND component_code = @component_code AND ended_at IS NULL
  AND (advisory_id = @advisory_id
       -- or names it by an alias, as the current result lists it
       OR EXISTS (SELECT 1 FROM component_results r
                  CROSS JOIN LATERAL jsonb_array_elements(r.advisories) a
                  WHERE r.site_id = @site AND r.code = @component_code AND a->>'id' = @advisory_id
                    AND upcheck_dismissal_names(advisory_dismissals.advisory_id, a)))
RETURNING id, reason, expires_at, from_manifest;

-- name: DismissalCreate :one
-- Dismisses the advisory as the component's current result lists it, so
-- that its fingerprint is what the admin accepted. No row comes back when
-- the current result lists no such advisory (or there is none).
INSERT INTO advisory_dismissals (site_id, component_code, advisory_id, user_id, user_email, reason, expires_at,
                                 severity, affected, fixed_in)
SELECT cs.site_id, cs.code, a->>'id', sqlc.narg(user_id)::bigint,
       (SELECT u.email FROM users u WHERE u.id = sqlc.narg(user_id)::bigint),
       @reason::text, sqlc.narg(expires_at)::timestamptz,
       coalesce(a->>'severity', ''), coalesce(a->>'affected', ''), coalesce(a->>'fixed_in', '')
FROM component_state cs
CROSS JOIN LATERAL jsonb_array_elements(cs.evaluation->'advisories') a
WHERE cs.site_id = @site AND cs.code = @component_code AND a->>'id' = @advisory_id::text
LIMIT 1
RETURNING id, dismissed_at, user_email, severity, affected, fixed_in;

-- name: DismissalStandingList :many
-- The standing decisions about one component's advisories, in force or
-- not: in_force reads the one definition (advisory_dismissals_in_force),
-- expired says whether the expiry has passed, on the database clock.
SELECT d.id, d.advisory_id, coalesce(d.user_email, u.email, '')::text AS by_email, d.dismissed_at, d.reason,
       d.expires_at, d.severity, d.affected, d.fixed_in,
       d.from_manifest,
       EXISTS (SELECT 1 FROM advisory_dismissals_in_force f WHERE f.id = d.id)::boolean AS in_force,
       coalesce(d.expires_at <= clock_timestamp(), false)::boolean AS expired
FROM advisory_dismissals d
LEFT JOIN users u ON u.id = d.user_id
WHERE d.site_id = @site AND d.component_code = @component_code AND d.ended_at IS NULL
ORDER BY d.advisory_id;

-- name: AdvisoryListedID :one
-- The id under which the component's current result lists the advisory
-- that id names, by its own id or an alias (upcheck_dismissal_names):
-- dismissing GHSA-… dismisses the advisory a publisher lists as ACME-9
-- with that alias. No row when the result lists no such advisory.
SELECT (a->>'id')::text AS id
FROM component_state cs
CROSS JOIN LATERAL jsonb_array_elements(cs.evaluation->'advisories') a
WHERE cs.site_id = @site AND cs.code = @component_code AND upcheck_dismissal_names(@advisory_id::text, a)
ORDER BY (a->>'id' = @advisory_id::text) DESC
LIMIT 1;

-- name: DismissalManifestStanding :many
-- The standing dismissals the manifest declared, as the manifest sync
-- compares them with the manifest.
SELECT id, component_code, advisory_id, reason, expires_at
FROM advisory_dismissals
WHERE site_id = @site AND from_manifest AND ended_at IS NULL
ORDER BY component_code, advisory_id;

-- name: DismissalEndByIDs :exec
-- Ends the given standing decisions ("undone": no longer declared,
-- "replaced": declared again otherwise).
UPDATE advisory_dismissals
SET ended_at = clock_timestamp(), ended_how = @how::text
WHERE id = ANY (@ids::bigint[]) AND ended_at IS NULL;

-- name: DismissalEndStanding :many
-- Ends the standing decision of the advisory for the component, whichever
-- made it ("replaced" by the manifest's).
UPDATE advisory_dismissals
SET ended_at = clock_timestamp(), ended_how = 'replaced'
WHERE site_id = @site AND component_code = @component_code::text AND upper(advisory_id) = upper(@advisory_id::text)
  AND ended_at IS NULL
RETURNING id;

-- name: DismissalManifestCreate :one
-- A dismissal the manifest declares: by id, without a fingerprint (it
-- holds whatever the advisory says later, until its expiry).
INSERT INTO advisory_dismissals (site_id, component_code, advisory_id, user_email, reason, expires_at, from_manifest)
VALUES (@site::bigint, @component_code::text, @advisory_id::text, 'manifest', @reason::text, sqlc.narg(expires_at)::timestamptz, true)
RETURNING id;
