-- +goose Up
-- Each site's sources (docs/design.md "A site's pages"): what is read of a
-- source (sources, source_trust, registry_keys) is one row for the whole
-- fleet, but which sources a site uses, how many of its components use
-- each, their pin and when the first was installed are the site's. The
-- state of a source (00006's source_state: stale, failing, untrusted,
-- unsigned, its trust) is written once here, per site; source_state stays
-- the local site's rows of it (00025), with its columns in their order.

-- The sources each site's components use: per site, how many use each,
-- their pin and when the first was installed. A reader that asks one
-- site (site_id = $1) has the condition pushed below the grouping, so it
-- reads that site's components alone (components' primary key leads
-- with site_id).
CREATE VIEW site_source_users AS
SELECT site_id, source_url AS url, count(*) AS components, max(pinned_key) AS pin, min(created_at) AS installed_at
FROM components WHERE source_url IS NOT NULL GROUP BY site_id, source_url;

-- Every source each site uses, stored or not yet, with its trust (00006's
-- source_state, its one definition, site_id first): `untrusted` is the one
-- definition of a source whose trust needs a look (the summary's
-- untrusted_sources): its document expires within the expiry warning
-- (upcheck_expiry_warning, 7 days) or has expired, or its last fetch was
-- refused for its signature, its key statement or a rollback; `unsigned`:
-- nothing proves who wrote its documents (the summary's
-- unsigned_sources): no key is pinned for a document source by the
-- site's components, or, for an npm source read once, its registry
-- published no signing keys (no key verified its stored package);
-- `offline`: the source is never fetched. Stale is judged from when the
-- site's first component that uses it was installed.
CREATE VIEW site_source_state AS
SELECT u.site_id,
       u.url,
       u.components,
       s.last_success_at,
       s.last_attempt_at,
       s.last_error,
       s.last_error_at,
       coalesce(s.consecutive_failures, 0)                AS consecutive_failures,
       s.expires_at,
       coalesce(s.signature_state, 'unsigned')            AS signature_state,
       (s.document IS NOT NULL)::boolean                  AS has_document,
       upcheck_stale(u.url, u.installed_at, s.last_success_at, s.expires_at) AS stale,
       upcheck_failing(s.last_error)                      AS failing,
       coalesce(s.expires_at <= clock_timestamp(), false)::boolean AS expired,
       u.pin,
       tk.trusted                                         AS trusted_keys,
       (CASE WHEN tk.trusted IS NULL THEN 0
             WHEN position(' of ' IN tk.trusted) > 0
             THEN cardinality(string_to_array(split_part(tk.trusted, ' of ', 2), ' '))
             ELSE 1 END)::integer                         AS trusted_count,
       (CASE WHEN t.pin = u.pin THEN t.version ELSE 0 END)::bigint AS key_version,
       s.sequence,
       coalesce(s.verified_by, '')::text                  AS verified_by,
       (coalesce(s.document IS NOT NULL AND s.expires_at < clock_timestamp() + upcheck_expiry_warning(), false)
        OR (upcheck_failing(s.last_error)
            AND coalesce(s.last_error_kind IN ('unsigned', 'bad_signature', 'key_statement', 'rollback'), false)))::boolean
                                                          AS untrusted,
       starts_with(u.url, 'offline:')                     AS offline,
       (CASE WHEN upcheck_source_kind(u.url) = 'npm'
             THEN coalesce(s.document IS NOT NULL AND s.signature_state <> 'verified', false)
             ELSE u.pin IS NULL END)::boolean             AS unsigned,
       upcheck_source_kind(u.url)                         AS kind,
       s.registry,
       rk.key_ids                                         AS registry_keys,
       rk.changed_at                                      AS keys_changed_at
FROM site_source_users u
LEFT JOIN sources s ON s.url = u.url
LEFT JOIN source_trust t ON t.url = u.url
LEFT JOIN registry_keys rk ON rk.registry = s.registry
LEFT JOIN LATERAL (SELECT CASE WHEN t.pin = u.pin AND t.keys IS NOT NULL THEN t.keys ELSE u.pin END AS trusted) tk ON true;

-- The local site's sources (00006, 00025): its rows of site_source_state,
-- the same columns in the same order.
CREATE OR REPLACE VIEW source_state AS
SELECT url, components, last_success_at, last_attempt_at, last_error, last_error_at, consecutive_failures,
       expires_at, signature_state, has_document, stale, failing, expired, pin, trusted_keys, trusted_count,
       key_version, sequence, verified_by, untrusted, offline, unsigned, kind, registry, registry_keys,
       keys_changed_at
FROM site_source_state
WHERE site_id = 1;

-- Read by nothing now: site_source_users says every site's.
DROP VIEW source_users;

-- +goose Down
-- The definitions before (00006's source_state, 00025's source_users).
CREATE VIEW source_users AS
SELECT source_url AS url, count(*) AS components, max(pinned_key) AS pin, min(created_at) AS installed_at
FROM components WHERE source_url IS NOT NULL AND site_id = 1 GROUP BY source_url;

CREATE OR REPLACE VIEW source_state AS
SELECT u.url,
       u.components,
       s.last_success_at,
       s.last_attempt_at,
       s.last_error,
       s.last_error_at,
       coalesce(s.consecutive_failures, 0)                AS consecutive_failures,
       s.expires_at,
       coalesce(s.signature_state, 'unsigned')            AS signature_state,
       (s.document IS NOT NULL)::boolean                  AS has_document,
       upcheck_stale(u.url, u.installed_at, s.last_success_at, s.expires_at) AS stale,
       upcheck_failing(s.last_error)                      AS failing,
       coalesce(s.expires_at <= clock_timestamp(), false)::boolean AS expired,
       u.pin,
       tk.trusted                                         AS trusted_keys,
       (CASE WHEN tk.trusted IS NULL THEN 0
             WHEN position(' of ' IN tk.trusted) > 0
             THEN cardinality(string_to_array(split_part(tk.trusted, ' of ', 2), ' '))
             ELSE 1 END)::integer                         AS trusted_count,
       (CASE WHEN t.pin = u.pin THEN t.version ELSE 0 END)::bigint AS key_version,
       s.sequence,
       coalesce(s.verified_by, '')::text                  AS verified_by,
       (coalesce(s.document IS NOT NULL AND s.expires_at < clock_timestamp() + upcheck_expiry_warning(), false)
        OR (upcheck_failing(s.last_error)
            AND coalesce(s.last_error_kind IN ('unsigned', 'bad_signature', 'key_statement', 'rollback'), false)))::boolean
                                                          AS untrusted,
       starts_with(u.url, 'offline:')                     AS offline,
       (CASE WHEN upcheck_source_kind(u.url) = 'npm'
             THEN coalesce(s.document IS NOT NULL AND s.signature_state <> 'verified', false)
             ELSE u.pin IS NULL END)::boolean             AS unsigned,
       upcheck_source_kind(u.url)                         AS kind,
       s.registry,
       rk.key_ids                                         AS registry_keys,
       rk.changed_at                                      AS keys_changed_at
FROM source_users u
LEFT JOIN sources s ON s.url = u.url
LEFT JOIN source_trust t ON t.url = u.url
LEFT JOIN registry_keys rk ON rk.registry = s.registry
LEFT JOIN LATERAL (SELECT CASE WHEN t.pin = u.pin AND t.keys IS NOT NULL THEN t.keys ELSE u.pin END AS trusted) tk ON true;

DROP VIEW site_source_state;
DROP VIEW site_source_users;
