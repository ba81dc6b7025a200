-- +goose Up
-- The fleet's counts of each site's components (docs/design.md "The
-- fleet"): how many components a site has, how many are offered an
-- update, a security update, are vulnerable, malicious, known to be
-- exploited, and how many carry a trust signal, each as the site's
-- summary counts them (queries/summary.sql, the totals), kept in one row
-- a site (the components do not depend on UPCHECK_LOCKFILE_DEV), so that
-- the Fleet page sorts and filters 10,000 sites by them without reading
-- component_state for each.
--
-- No trigger keeps them: the check's result writes (serialized by the
-- lease's lock) stay as cheap as they were. Whoever changes a site's
-- components or what was decided of them refreshes the site once when its
-- writes for it are done (store.Store.RefreshSiteComponentCounts: the end
-- of a check, of a push's evaluation, of a sync, a feed sync, an import,
-- a skip, an approval, a dismissal), many sites at a time in one
-- statement. What no write changes is the clock: a dismissal whose expiry
-- passes, a pin downgrade no longer shown, counts at the site's next
-- refresh (every check refreshes every site).
CREATE TABLE fleet_site_components (
    site_id         bigint      PRIMARY KEY REFERENCES sites (id) ON DELETE CASCADE,
    -- Whether every component of the site was read: its inventory is
    -- known (it has components, or a tree was read) and none has a source
    -- never read (the summary's any_never). While not, the pages say "not
    -- checked" rather than a 0 that reads as up to date.
    checked         boolean     NOT NULL,
    components      integer     NOT NULL,
    updates         integer     NOT NULL,
    security        integer     NOT NULL,
    vulnerable      integer     NOT NULL,
    -- A trust signal: the component's trust went down (provenance lost, a
    -- version by a new publisher, a pin lowered: the summary's
    -- trust_downgrades) or its offered update brings a signal (the
    -- summary's brings), counted once however many.
    trust           integer     NOT NULL,
    malicious       integer     NOT NULL,
    known_exploited integer     NOT NULL,
    refreshed_at    timestamptz NOT NULL
);

-- Refreshes the counts of the sites named, in one statement however many
-- (a check names every site, in batches: store.RefreshSiteComponentCounts).
-- Two refreshes of one site lock its row first (in site order, so that
-- two batches never deadlock) and count after the lock, each statement
-- under a snapshot of its own: the later counts what the earlier, and
-- every write committed before it, committed.
-- +goose StatementBegin
CREATE FUNCTION upcheck_fleet_components_refresh(site_ids bigint[])
RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM 1 FROM fleet_site_components WHERE site_id = ANY (site_ids) ORDER BY site_id FOR UPDATE;
    UPDATE fleet_site_components f
    SET checked = n.checked, components = n.components, updates = n.updates, security = n.security,
        vulnerable = n.vulnerable, trust = n.trust, malicious = n.malicious, known_exploited = n.known_exploited,
        refreshed_at = clock_timestamp()
    FROM (
        SELECT s.id AS site_id,
               (count(c.site_id) > 0 OR EXISTS (SELECT 1 FROM tree_state t WHERE t.site_id = s.id))
                   AND NOT coalesce(bool_or(c.source_url IS NOT NULL AND c.last_success_at IS NULL), false) AS checked,
               count(c.site_id)                                     AS components,
               count(*) FILTER (WHERE c.update_available)           AS updates,
               count(*) FILTER (WHERE c.security)                   AS security,
               count(*) FILTER (WHERE c.vulnerable)                 AS vulnerable,
               count(*) FILTER (WHERE c.provenance_lost IS NOT NULL OR c.new_publisher_version IS NOT NULL
                                      OR c.pin_downgrade IS NOT NULL
                                      OR (c.update_available AND jsonb_typeof(c.registry_facts->'brings') = 'array'
                                          AND jsonb_array_length(c.registry_facts->'brings') > 0)) AS trust,
               count(*) FILTER (WHERE c.malicious)                  AS malicious,
               count(*) FILTER (WHERE c.known_exploited)            AS known_exploited
        FROM sites s
        LEFT JOIN component_state c ON c.site_id = s.id
        WHERE s.id = ANY (site_ids)
        GROUP BY s.id
    ) n
    WHERE f.site_id = n.site_id;
END
$$;
-- +goose StatementEnd

-- A site made has its row, not checked, so that a refresh always finds a
-- row to lock.
-- +goose StatementBegin
CREATE FUNCTION upcheck_fleet_components_site_added() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fleet_site_components (site_id, checked, components, updates, security, vulnerable, trust, malicious,
                                       known_exploited, refreshed_at)
    SELECT id, false, 0, 0, 0, 0, 0, 0, 0, clock_timestamp() FROM changed
    ON CONFLICT (site_id) DO NOTHING;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER fleet_components_site_added AFTER INSERT ON sites
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION upcheck_fleet_components_site_added();

-- Every site there is, counted once now.
INSERT INTO fleet_site_components (site_id, checked, components, updates, security, vulnerable, trust, malicious,
                                   known_exploited, refreshed_at)
SELECT id, false, 0, 0, 0, 0, 0, 0, 0, clock_timestamp() FROM sites;
SELECT upcheck_fleet_components_refresh(ARRAY(SELECT id FROM sites));

-- +goose Down
DROP TRIGGER fleet_components_site_added ON sites;
DROP FUNCTION upcheck_fleet_components_site_added();
DROP FUNCTION upcheck_fleet_components_refresh(bigint[]);
DROP TABLE fleet_site_components;
