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
-- EventPlanSitesNothingNew): raises UN001 (store.ErrEventsToQueue) when an
-- enabled channel of some sites or of the fleet sees one of the sites and
-- the component's stored result may call for an event (any fact
-- EventPlanSites plans from: a security update, an advisory, a
-- deprecation, a trust downgrade, an update); the writer then plans in a
-- transaction. A superset: with such a channel, a registered site's
-- result that calls for any event goes through the transaction each time,
-- which plans nothing twice. Without one it reads no result.
-- +goose StatementBegin
CREATE FUNCTION upcheck_sites_nothing_to_queue(sites bigint[], codes text[])
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM notification_channels WHERE enabled AND scope <> 'local') THEN
        RETURN;
    END IF;
    IF EXISTS (SELECT FROM unnest(sites, codes) AS k(site_id, code)
               JOIN component_results r ON r.site_id = k.site_id AND r.code = k.code
               WHERE (r.security OR r.update_available OR r.malicious_ids <> '{}' OR r.exploited_ids <> '{}'
                      OR r.no_fix_ids <> '{}' OR r.deprecated IS NOT NULL OR r.provenance_lost IS NOT NULL
                      OR r.new_publisher_version IS NOT NULL)
                 AND EXISTS (SELECT FROM notification_channels ch
                             WHERE ch.enabled AND ch.scope <> 'local' AND upcheck_channel_sees(ch.scope, ch.id, r.site_id))) THEN
        RAISE EXCEPTION 'notification events of registered sites to queue' USING ERRCODE = 'UN001';
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION upcheck_sites_nothing_to_queue(bigint[], text[]);
DROP TABLE notification_fleet_component_told;
DROP FUNCTION upcheck_channel_only_of(text, bigint, bigint);
