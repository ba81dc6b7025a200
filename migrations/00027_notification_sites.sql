-- +goose Up
-- A channel's sites (docs/notifications.md "Sites"): a channel is
-- subscribed to the local site (every channel before sites, the default),
-- to some sites (notification_channel_sites), or to the fleet (every site,
-- present and future). Its events name only the sites of its scope.
ALTER TABLE notification_channels
    ADD COLUMN scope text NOT NULL DEFAULT 'local' CHECK (scope IN ('local', 'sites', 'fleet'));

-- The sites of a channel whose scope is 'sites'. A removed site leaves
-- its channels (they are told of their other sites, or of nothing).
CREATE TABLE notification_channel_sites (
    channel_id bigint NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
    site_id    bigint NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    PRIMARY KEY (channel_id, site_id)
);
-- A site's channels: the per-site events' join (EventPlanSiteTreeFindings).
CREATE INDEX notification_channel_sites_site ON notification_channel_sites (site_id, channel_id);

-- The one answer to "are channel's events about site?": the fleet sees
-- every site, a local channel the local site (id 1), a channel of some
-- sites those. The events about the local site's components, sources and
-- checks go to the channels that see the local site.
-- +goose StatementBegin
CREATE FUNCTION upcheck_channel_sees(scope text, channel bigint, site bigint)
RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT scope = 'fleet' OR (scope = 'local' AND site = 1)
        OR (scope = 'sites' AND EXISTS (SELECT 1 FROM notification_channel_sites s
                                        WHERE s.channel_id = channel AND s.site_id = site))
$$;
-- +goose StatementEnd

-- The fleet digest's memory (EventPlanFleetFindings): which site a fleet
-- channel was told has which finding (a package version and an advisory).
-- One digest event names the sites newly told of one finding in one
-- planning, keyed by the finding and the hash of those sites: a planning
-- again after a crash (its transaction rolled back) finds the same sites
-- and the same key, and one after a commit finds them told.
CREATE TABLE notification_fleet_told (
    channel_id  bigint NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
    name        text   NOT NULL,
    version     text   NOT NULL,
    advisory_id text   NOT NULL,
    site_id     bigint NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    PRIMARY KEY (channel_id, name, version, advisory_id, site_id)
);
CREATE INDEX notification_fleet_told_site ON notification_fleet_told (site_id);

-- +goose Down
DROP TABLE notification_fleet_told;
DROP FUNCTION upcheck_channel_sees(text, bigint, bigint);
DROP TABLE notification_channel_sites;
ALTER TABLE notification_channels DROP COLUMN scope;
