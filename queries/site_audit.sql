-- name: SiteNameOf :one
-- A site's name by its id: what an audit row of a registered site's
-- component names it by (store.Executor.auditSiteAppend).
SELECT name FROM sites WHERE id = @site::bigint;
