-- +goose Up
-- The installed tree as the Packages page and GET /api/admin/packages list
-- it: one row per package name, however many instances of it the tree
-- installs (migrations/00012_tree.sql). Read when asked, never cached: a
-- page of it costs one statement over tree_packages, so no trigger needs
-- to turn a cache when a lockfile sync rewrites the tree.

-- One row per installed package name: its versions, how many instances,
-- its flags (dev: every instance is installed only for development, by
-- the lockfile's flag or because only the site's devDependencies reach it;
-- install_script: an instance runs a script when installed;
-- other_sources: the sources of the instances that did not come from a
-- registry), the components that bring it in, the site's direct
-- dependencies that do (heads), and one shortest path from one of them
-- (the shortest, then by head).
CREATE VIEW tree_package_names AS
SELECT t.name,
       array_agg(DISTINCT t.version ORDER BY t.version)::text[]                               AS versions,
       count(*)::integer                                                                       AS instances,
       bool_and(t.dev OR t.dev_only)                                                           AS dev,
       bool_or(t.install_script)                                                               AS install_script,
       coalesce(array_agg(DISTINCT t.source ORDER BY t.source) FILTER (WHERE t.source <> 'registry'),
                '{}')::text[]                                                                  AS other_sources,
       coalesce((SELECT array_agg(DISTINCT c.code ORDER BY c.code)
                   FROM tree_packages u CROSS JOIN LATERAL unnest(u.components) AS c(code)
                  WHERE u.name = t.name), '{}')::text[]                                        AS components,
       coalesce((SELECT array_agg(DISTINCT v.e->>'head' ORDER BY v.e->>'head')
                   FROM tree_packages u CROSS JOIN LATERAL jsonb_array_elements(u.via) AS v(e)
                  WHERE u.name = t.name), '{}')::text[]                                        AS heads,
       coalesce((SELECT v.e->'path'
                   FROM tree_packages u CROSS JOIN LATERAL jsonb_array_elements(u.via) AS v(e)
                  WHERE u.name = t.name
                  ORDER BY jsonb_array_length(v.e->'path'), v.e->>'head'
                  LIMIT 1), '[]')::jsonb                                                       AS path
FROM tree_packages t
GROUP BY t.name;

-- +goose Down
DROP VIEW tree_package_names;
