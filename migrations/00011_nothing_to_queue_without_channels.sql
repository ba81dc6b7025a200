-- +goose Up
-- upcheck_nothing_to_queue answers at once when no channel is enabled,
-- without reading a result. Its comment in 00007 says so, but the planner
-- made the results' side of its join the outer one: every pipelined write
-- of a check looked up its components in component_results eight times
-- (one per kind of event) to join them with no channel: 1.4–1.7 ms of
-- each write's time under the lease's lock on a loaded machine
-- (docs/performance.md). The body is 00007's with that test first.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION upcheck_nothing_to_queue(codes text[])
RETURNS void
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    -- The events missing by their keys: channel, scope, advisory id and
    -- component of each (scope null: not an advisory's event).
    by_key jsonb;
    missing bigint;
    -- A channel has an EPSS threshold: only then are scores read.
    thresholds boolean := EXISTS (SELECT FROM notification_channels WHERE enabled AND min_epss IS NOT NULL);
BEGIN
    -- No enabled channel: no event to queue, and no result to read.
    IF NOT EXISTS (SELECT FROM notification_channels WHERE enabled) THEN
        RETURN;
    END IF;
    SELECT jsonb_agg(jsonb_build_object('channel', ch.id, 'scope', f.scope, 'id', f.id, 'code', f.code))
           FILTER (WHERE NOT EXISTS (SELECT FROM notification_events e WHERE e.channel_id = ch.id AND e.key = f.key))
    INTO by_key
    FROM notification_channels ch
    JOIN (
        SELECT 'security_update.available:' || r.code || '@' || r.security_version AS key, false AS update_only,
               NULL::float8 AS epss, NULL AS scope, NULL AS id, NULL AS code
        FROM component_results r
        WHERE r.code = ANY (codes) AND r.security AND r.security_version IS NOT NULL
        UNION ALL
        SELECT 'malicious_package:' || r.code || '@' || r.installed_version || '/' || id, false, NULL::float8,
               'malicious_package:' || r.code || '@' || r.installed_version, id, r.code
        FROM component_results r
        CROSS JOIN LATERAL unnest(r.malicious_ids) AS id
        WHERE r.code = ANY (codes)
        UNION ALL
        SELECT 'advisory.exploited:' || r.code || '/' || id, false, NULL,
               'advisory.exploited:' || r.code, id, r.code
        FROM component_results r
        CROSS JOIN LATERAL unnest(r.exploited_ids) AS id
        WHERE r.code = ANY (codes) AND NOT id = ANY (r.malicious_ids)
        UNION ALL
        -- An unfixed advisory that is exploited or malicious has its own
        -- event; its EPSS score is read only for a channel with a threshold.
        SELECT 'advisory.unfixed:' || r.code || '@' || r.installed_version || '/' || id, false,
               CASE WHEN thresholds THEN (SELECT max((a->'epss'->>'score')::float8)
                                           FROM jsonb_array_elements(r.advisories) AS a WHERE a->>'id' = id) END,
               'advisory.unfixed:' || r.code || '@' || r.installed_version, id, r.code
        FROM component_results r
        CROSS JOIN LATERAL unnest(r.no_fix_ids) AS id
        WHERE r.code = ANY (codes) AND NOT id = ANY (r.exploited_ids) AND NOT id = ANY (r.malicious_ids)
        UNION ALL
        SELECT 'deprecated:' || r.code || '@' || r.installed_version, false, NULL, NULL, NULL, NULL
        FROM component_results r
        WHERE r.code = ANY (codes) AND r.deprecated IS NOT NULL
        UNION ALL
        SELECT 'trust_downgrade:' || r.code || '@' || r.provenance_lost || '/provenance_lost', false, NULL, NULL, NULL, NULL
        FROM component_results r
        WHERE r.code = ANY (codes) AND r.provenance_lost IS NOT NULL
        UNION ALL
        SELECT 'trust_downgrade:' || r.code || '@' || r.new_publisher_version || '/new_publisher', false, NULL, NULL, NULL, NULL
        FROM component_results r
        WHERE r.code = ANY (codes) AND r.new_publisher_version IS NOT NULL
        UNION ALL
        SELECT 'update.available:' || r.code || '@' || r.update_version, true, NULL, NULL, NULL, NULL
        FROM component_results r
        WHERE r.code = ANY (codes) AND r.update_available
    ) f ON (ch.events = 'all' OR NOT f.update_only)
       AND (ch.min_epss IS NULL OR f.epss IS NULL OR f.epss >= ch.min_epss)
    WHERE ch.enabled;
    IF by_key IS NULL THEN
        RETURN;
    END IF;
    SELECT count(*)
    INTO missing
    FROM jsonb_array_elements(by_key) AS m(v)
    WHERE m.v->>'scope' IS NULL OR NOT EXISTS (
        SELECT FROM notification_events e
        JOIN component_results r ON r.code = m.v->>'code'
        WHERE e.advisory_scope = m.v->>'scope' AND e.channel_id = (m.v->>'channel')::bigint
          AND e.advisory_keys && upcheck_advisory_keys(jsonb_path_query_array(
                  r.advisories, '$[*] ? (@.id == $id)', jsonb_build_object('id', m.v->>'id'))));
    IF missing > 0 THEN
        RAISE EXCEPTION '% notification events to queue', missing USING ERRCODE = 'UN001';
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION upcheck_nothing_to_queue(codes text[])
RETURNS void
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    -- The events missing by their keys: channel, scope, advisory id and
    -- component of each (scope null: not an advisory's event).
    by_key jsonb;
    missing bigint;
    -- A channel has an EPSS threshold: only then are scores read.
    thresholds boolean := EXISTS (SELECT FROM notification_channels WHERE enabled AND min_epss IS NOT NULL);
BEGIN
    SELECT jsonb_agg(jsonb_build_object('channel', ch.id, 'scope', f.scope, 'id', f.id, 'code', f.code))
           FILTER (WHERE NOT EXISTS (SELECT FROM notification_events e WHERE e.channel_id = ch.id AND e.key = f.key))
    INTO by_key
    FROM notification_channels ch
    JOIN (
        SELECT 'security_update.available:' || r.code || '@' || r.security_version AS key, false AS update_only,
               NULL::float8 AS epss, NULL AS scope, NULL AS id, NULL AS code
        FROM component_results r
        WHERE r.code = ANY (codes) AND r.security AND r.security_version IS NOT NULL
        UNION ALL
        SELECT 'malicious_package:' || r.code || '@' || r.installed_version || '/' || id, false, NULL::float8,
               'malicious_package:' || r.code || '@' || r.installed_version, id, r.code
        FROM component_results r
        CROSS JOIN LATERAL unnest(r.malicious_ids) AS id
        WHERE r.code = ANY (codes)
        UNION ALL
        SELECT 'advisory.exploited:' || r.code || '/' || id, false, NULL,
               'advisory.exploited:' || r.code, id, r.code
        FROM component_results r
        CROSS JOIN LATERAL unnest(r.exploited_ids) AS id
        WHERE r.code = ANY (codes) AND NOT id = ANY (r.malicious_ids)
        UNION ALL
        -- An unfixed advisory that is exploited or malicious has its own
        -- event; its EPSS score is read only for a channel with a threshold.
        SELECT 'advisory.unfixed:' || r.code || '@' || r.installed_version || '/' || id, false,
               CASE WHEN thresholds THEN (SELECT max((a->'epss'->>'score')::float8)
                                           FROM jsonb_array_elements(r.advisories) AS a WHERE a->>'id' = id) END,
               'advisory.unfixed:' || r.code || '@' || r.installed_version, id, r.code
        FROM component_results r
        CROSS JOIN LATERAL unnest(r.no_fix_ids) AS id
        WHERE r.code = ANY (codes) AND NOT id = ANY (r.exploited_ids) AND NOT id = ANY (r.malicious_ids)
        UNION ALL
        SELECT 'deprecated:' || r.code || '@' || r.installed_version, false, NULL, NULL, NULL, NULL
        FROM component_results r
        WHERE r.code = ANY (codes) AND r.deprecated IS NOT NULL
        UNION ALL
        SELECT 'trust_downgrade:' || r.code || '@' || r.provenance_lost || '/provenance_lost', false, NULL, NULL, NULL, NULL
        FROM component_results r
        WHERE r.code = ANY (codes) AND r.provenance_lost IS NOT NULL
        UNION ALL
        SELECT 'trust_downgrade:' || r.code || '@' || r.new_publisher_version || '/new_publisher', false, NULL, NULL, NULL, NULL
        FROM component_results r
        WHERE r.code = ANY (codes) AND r.new_publisher_version IS NOT NULL
        UNION ALL
        SELECT 'update.available:' || r.code || '@' || r.update_version, true, NULL, NULL, NULL, NULL
        FROM component_results r
        WHERE r.code = ANY (codes) AND r.update_available
    ) f ON (ch.events = 'all' OR NOT f.update_only)
       AND (ch.min_epss IS NULL OR f.epss IS NULL OR f.epss >= ch.min_epss)
    WHERE ch.enabled;
    IF by_key IS NULL THEN
        RETURN;
    END IF;
    SELECT count(*)
    INTO missing
    FROM jsonb_array_elements(by_key) AS m(v)
    WHERE m.v->>'scope' IS NULL OR NOT EXISTS (
        SELECT FROM notification_events e
        JOIN component_results r ON r.code = m.v->>'code'
        WHERE e.advisory_scope = m.v->>'scope' AND e.channel_id = (m.v->>'channel')::bigint
          AND e.advisory_keys && upcheck_advisory_keys(jsonb_path_query_array(
                  r.advisories, '$[*] ? (@.id == $id)', jsonb_build_object('id', m.v->>'id'))));
    IF missing > 0 THEN
        RAISE EXCEPTION '% notification events to queue', missing USING ERRCODE = 'UN001';
    END IF;
END
$$;
-- +goose StatementEnd
