-- +goose Up
-- What a site's summary counts of the notifications (docs/design.md
-- "Notifications by site"): the deliveries of the channels told of that
-- site alone, the channels a principal limited to it may see (a local
-- channel for the local site, a channel of some sites whose only site it
-- is). A channel of the fleet or of several sites is not counted in any
-- one site's summary: its failures would tell a viewer of one site of
-- the others' channels.
-- +goose StatementBegin
CREATE FUNCTION upcheck_channel_only_of(scope text, channel bigint, site bigint)
RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT (scope = 'local' AND site = 1)
        OR (scope = 'sites' AND EXISTS (SELECT 1 FROM notification_channel_sites s
                                        WHERE s.channel_id = channel AND s.site_id = site)
                            AND NOT EXISTS (SELECT 1 FROM notification_channel_sites s
                                            WHERE s.channel_id = channel AND s.site_id <> site))
$$;
-- +goose StatementEnd

-- The fleet's digest of registered sites' components (queries/
-- notification_sites.sql, EventPlanSites): which site a channel of the
-- fleet was told has which component fact (an event's type and subject:
-- "security_update.available:npm:debug@4.4.3"). One digest event names
-- the sites newly told of one fact in one planning, keyed by the fact and
-- the hash of those sites: a planning again after a crash finds the same
-- sites and the same key, one after a commit finds them told.
CREATE TABLE notification_fleet_component_told (
    channel_id bigint NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
    fact       text   NOT NULL,
    site_id    bigint NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    PRIMARY KEY (channel_id, fact, site_id)
);
CREATE INDEX notification_fleet_component_told_site ON notification_fleet_component_told (site_id);

-- EventPlanNothingNew's question for a registered site's components, in a
-- check's pipelined write (queries/notification_sites.sql,
-- EventPlanSitesNothingNew): raises UN001 (store.ErrEventsToQueue) when
-- an enabled channel of some sites or of the fleet that sees one of the
-- sites may lack an event its component's stored result calls for; the
-- writer then plans in a transaction (EventPlanSites). The facts are
-- made from the stored results as upcheck_nothing_to_queue makes the
-- local site's (a superset of EventPlanSites' read-model facts, keyed by
-- the same type and subject; keep the three in step): a channel of some
-- sites lacks one whose key (type@SITE:subject) it has no event of, a
-- channel of the fleet one whose site it was not told of
-- (notification_fleet_component_told). So a write whose events are all
-- queued stays pipelined. Without such a channel it reads no result.
-- +goose StatementBegin
CREATE FUNCTION upcheck_sites_nothing_to_queue(sites bigint[], codes text[])
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM notification_channels WHERE enabled AND scope <> 'local') THEN
        RETURN;
    END IF;
    IF EXISTS (
        WITH r AS (
            SELECT r.* FROM unnest(sites, codes) AS k(site_id, code)
            JOIN component_results r ON r.site_id = k.site_id AND r.code = k.code
            WHERE k.site_id <> 1
        ),
        f AS (
            SELECT r.site_id, 'security_update.available' AS type, r.code || '@' || r.security_version AS subject,
                   NULL::float8 AS epss
            FROM r WHERE (r.security OR r.fix_ids <> '{}') AND r.security_version IS NOT NULL
            UNION ALL
            SELECT r.site_id, 'malicious_package', r.code || '@' || r.installed_version || '/' || id, NULL
            FROM r CROSS JOIN LATERAL unnest(r.malicious_ids) AS id
            UNION ALL
            SELECT r.site_id, 'advisory.exploited', r.code || '/' || id, NULL
            FROM r CROSS JOIN LATERAL unnest(r.exploited_ids) AS id
            WHERE NOT id = ANY (r.malicious_ids)
            UNION ALL
            SELECT r.site_id, 'advisory.unfixed', r.code || '@' || r.installed_version || '/' || id,
                   (SELECT max((a->'epss'->>'score')::float8) FROM jsonb_array_elements(r.advisories) AS a WHERE a->>'id' = id)
            FROM r CROSS JOIN LATERAL unnest(r.no_fix_ids) AS id
            WHERE NOT id = ANY (r.exploited_ids) AND NOT id = ANY (r.malicious_ids)
            UNION ALL
            SELECT r.site_id, 'deprecated', r.code || '@' || r.installed_version, NULL
            FROM r WHERE r.deprecated IS NOT NULL
            UNION ALL
            SELECT r.site_id, 'trust_downgrade', r.code || '@' || r.provenance_lost || '/provenance_lost', NULL
            FROM r WHERE r.provenance_lost IS NOT NULL
            UNION ALL
            SELECT r.site_id, 'trust_downgrade', r.code || '@' || r.new_publisher_version || '/new_publisher', NULL
            FROM r WHERE r.new_publisher_version IS NOT NULL
            UNION ALL
            SELECT r.site_id, 'trust_downgrade',
                   r.code || '@' || (s->'args'->>'version') || '/' || (s->>'kind')
                       || coalesce('/' || nullif(s->'args'->>'name', ''), '') || coalesce('@' || (s->'args'->>'sha256'), ''),
                   NULL
            FROM r CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(r.registry_facts->'brings') = 'array'
                                                                THEN r.registry_facts->'brings' ELSE '[]'::jsonb END) AS s
            WHERE r.update_available
            UNION ALL
            SELECT r.site_id, 'update.available', r.code || '@' || r.update_version, NULL
            FROM r WHERE r.update_available
        )
        SELECT FROM f
        JOIN sites st ON st.id = f.site_id
        JOIN notification_channels ch ON ch.enabled AND ch.scope <> 'local' AND upcheck_channel_sees(ch.scope, ch.id, f.site_id)
             AND (ch.events = 'all' OR f.type <> 'update.available')
             AND (ch.min_epss IS NULL OR f.epss IS NULL OR f.epss >= ch.min_epss)
        WHERE CASE WHEN ch.scope = 'fleet'
                   THEN NOT EXISTS (SELECT FROM notification_fleet_component_told t
                                    WHERE t.channel_id = ch.id AND t.fact = f.type || ':' || f.subject AND t.site_id = f.site_id)
                   ELSE NOT EXISTS (SELECT FROM notification_events e
                                    WHERE e.channel_id = ch.id AND e.key = f.type || '@' || st.name || ':' || f.subject) END
    ) THEN
        RAISE EXCEPTION 'notification events of registered sites to queue' USING ERRCODE = 'UN001';
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION upcheck_sites_nothing_to_queue(bigint[], text[]);
DROP TABLE notification_fleet_component_told;
DROP FUNCTION upcheck_channel_only_of(text, bigint, bigint);
