-- +goose Up
-- The keys a source is trusted under, when a key statement changed them
-- (docs/update-document.md "Rotating keys"). The manifest's pin
-- (components.pinned_key) stays the root of trust: a row applies only
-- while its pin is the pin of the source's components; when the manifest
-- pins something else, the pin's own keys are trusted again. Written only
-- in the check's fenced writes, with the source's row.
CREATE TABLE source_trust (
    url                 text        PRIMARY KEY REFERENCES sources (url) ON DELETE CASCADE,
    pin                 text        NOT NULL, -- the pin the row belongs to (canonical text)
    keys                text,                 -- the endorsed set (canonical text); null: the pin's own
    version             bigint      NOT NULL DEFAULT 0, -- the last statement accepted under the pin
    statement           bytea,                -- its exact body
    statement_signature text,                 -- and its signature set
    changed_at          timestamptz,          -- when keys last changed
    checked_at          timestamptz,          -- when the statement was last fetched
    epoch               bigint      NOT NULL
);

-- The short forms of the keys that verified the stored document
-- ("ab12cd34…ef01", space separated); null when unsigned.
ALTER TABLE sources ADD COLUMN verified_by text;

-- source_state gains the trust facts, and `untrusted`: the one definition
-- of a source whose trust needs a look (the summary's untrusted_sources):
-- its document expires within 7 days (or has expired), or its last fetch
-- was refused for its signature, its key statement or a rollback.
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
       upcheck_stale(s.last_success_at, s.expires_at)     AS stale,
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
       (coalesce(s.document IS NOT NULL AND s.expires_at < clock_timestamp() + interval '7 days', false)
        OR (upcheck_failing(s.last_error)
            AND coalesce(s.last_error_kind IN ('unsigned', 'bad_signature', 'key_statement', 'rollback'), false)))::boolean
                                                          AS untrusted
FROM (SELECT source_url AS url, count(*) AS components, max(pinned_key) AS pin
      FROM components WHERE source_url IS NOT NULL GROUP BY source_url) u
LEFT JOIN sources s ON s.url = u.url
LEFT JOIN source_trust t ON t.url = u.url
LEFT JOIN LATERAL (SELECT CASE WHEN t.pin = u.pin AND t.keys IS NOT NULL THEN t.keys ELSE u.pin END AS trusted) tk ON true;

-- +goose Down
DROP VIEW source_state;
CREATE VIEW source_state AS
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
       upcheck_stale(s.last_success_at, s.expires_at)     AS stale,
       upcheck_failing(s.last_error)                      AS failing,
       coalesce(s.expires_at <= clock_timestamp(), false)::boolean AS expired
FROM (SELECT source_url AS url, count(*) AS components
      FROM components WHERE source_url IS NOT NULL GROUP BY source_url) u
LEFT JOIN sources s ON s.url = u.url;
ALTER TABLE sources DROP COLUMN verified_by;
DROP TABLE source_trust;
