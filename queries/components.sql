-- name: ComponentList :many
SELECT code, name, installed_version, source_url, pinned_key, package, policy
FROM components
WHERE site_id = @site
ORDER BY code;

-- name: ComponentGet :one
SELECT code, name, installed_version, source_url, pinned_key, package, policy
FROM components
WHERE site_id = @site AND code = @code;

-- name: ComponentUpsertMany :execrows
-- Inserts or updates the given components of the site in one statement;
-- rows that would not change are left alone. An empty source or key is
-- stored as null.
INSERT INTO components (site_id, code, name, installed_version, source_url, pinned_key, package, policy)
SELECT @site::bigint, m.code, m.name, m.installed_version, nullif(m.source_url, ''), nullif(m.pinned_key, ''), nullif(m.package, ''),
       nullif(m.policy, '')
FROM (SELECT unnest(@codes::text[])              AS code,
             unnest(@names::text[])              AS name,
             unnest(@installed_versions::text[]) AS installed_version,
             unnest(@source_urls::text[])        AS source_url,
             unnest(@pinned_keys::text[])        AS pinned_key,
             unnest(@packages::text[])           AS package,
             unnest(@policies::text[])           AS policy) m
ON CONFLICT (site_id, code) DO UPDATE
SET name              = EXCLUDED.name,
    installed_version = EXCLUDED.installed_version,
    source_url        = EXCLUDED.source_url,
    pinned_key        = EXCLUDED.pinned_key,
    package           = EXCLUDED.package,
    policy            = EXCLUDED.policy,
    updated_at        = clock_timestamp()
WHERE (components.name, components.installed_version, components.source_url, components.pinned_key, components.package,
       components.policy)
      IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.installed_version, EXCLUDED.source_url, EXCLUDED.pinned_key, EXCLUDED.package,
                        EXCLUDED.policy);

-- name: ComponentDelete :execrows
DELETE FROM components
WHERE site_id = @site AND code = ANY (@codes::text[]);

-- name: ComponentInputsForSource :many
-- What evaluating the components of one source needs, every site's, in
-- one snapshot: each with its site's core, policy, skip and approvals.
SELECT c.site_id, c.code, c.installed_version, coalesce(c.package, '')::text AS package,
       coalesce((SELECT k.installed_version FROM components k WHERE k.site_id = c.site_id AND k.code = 'core'), '')::text
           AS core_version,
       coalesce(c.policy, '')::text AS policy,
       coalesce((SELECT k.version FROM component_skips k WHERE k.site_id = c.site_id AND k.code = c.code), '')::text
           AS skipped_version,
       upcheck_approvals_of(c.site_id, c.code)::text AS approvals
FROM components c
WHERE c.source_url = @source_url::text
ORDER BY c.site_id, c.code;

-- name: ComponentListUnevaluated :many
-- The site's components whose source has a stored document but who have
-- no result evaluated from the current inputs (see component_state).
SELECT cs.site_id, cs.code, cs.installed_version, cs.source_url::text AS source_url, cs.pinned_key,
       coalesce(cs.package, '')::text AS package, coalesce(cs.policy, '')::text AS policy,
       coalesce((SELECT k.version FROM component_skips k WHERE k.site_id = cs.site_id AND k.code = cs.code), '')::text
           AS skipped_version,
       upcheck_approvals_of(cs.site_id, cs.code)::text AS approvals
FROM component_state cs
JOIN sources s ON s.url = cs.source_url
WHERE cs.site_id = @site AND NOT cs.evaluated AND s.document IS NOT NULL
ORDER BY cs.source_url, cs.code;

-- name: ComponentCodes :many
SELECT code FROM components WHERE site_id = @site ORDER BY code;

-- name: ComponentListFleet :many
-- Every site's installed components, by site and code: what a check
-- fetches the sources of, once each however many sites use one.
SELECT site_id, code, name, installed_version, source_url, pinned_key, package, policy
FROM components
ORDER BY site_id, code;
