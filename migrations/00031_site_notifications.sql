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

-- +goose Down
DROP FUNCTION upcheck_channel_only_of(text, bigint, bigint);
