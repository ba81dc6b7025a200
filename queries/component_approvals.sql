-- name: ApprovalPut :one
-- Approves version of the component, with what it brings (digest),
-- replacing an approval of the same; when it was approved comes back.
INSERT INTO component_approvals (site_id, code, version, digest, reason, actor, user_id, from_manifest)
VALUES (@site::bigint, @code::text, @version::text, @digest::text, @reason::text, @actor::text, sqlc.narg(user_id)::bigint,
        @from_manifest::boolean)
ON CONFLICT (site_id, code, version, digest) DO UPDATE
SET reason = EXCLUDED.reason, actor = EXCLUDED.actor, user_id = EXCLUDED.user_id,
    from_manifest = EXCLUDED.from_manifest, approved_at = clock_timestamp()
RETURNING approved_at;

-- name: ApprovalList :many
-- The component's approvals, newest first.
SELECT code, version, digest, reason, actor, from_manifest, approved_at
FROM component_approvals
WHERE site_id = @site AND code = @code::text
ORDER BY approved_at DESC, version, digest;

-- name: ApprovalInputs :many
-- Every component's approvals of the site as an evaluation reads them
-- (upcheck_approvals_of), for the components that have any.
SELECT DISTINCT a.code, upcheck_approvals_of(a.site_id, a.code)::text AS approvals
FROM component_approvals a
WHERE a.site_id = @site
ORDER BY a.code;

-- name: ApprovalsOfManifest :many
-- The approvals the manifest declares, standing now.
SELECT code, version, digest, reason
FROM component_approvals
WHERE site_id = @site AND from_manifest
ORDER BY code, version, digest;

-- name: ApprovalDelete :execrows
-- Ends one approval of the manifest's (the manifest no longer declares it).
DELETE FROM component_approvals
WHERE site_id = @site AND code = @code::text AND version = @version::text AND digest = @digest::text AND from_manifest;

-- name: ApprovalInputsFleet :many
-- Every site's components' approvals as an evaluation reads them
-- (upcheck_approvals_of), for the components that have any.
SELECT DISTINCT a.site_id, a.code, upcheck_approvals_of(a.site_id, a.code)::text AS approvals
FROM component_approvals a
ORDER BY a.site_id, a.code;
