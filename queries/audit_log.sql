-- name: AuditAppend :one
INSERT INTO audit_log (user_id, action, detail)
VALUES (sqlc.narg(user_id), @action, @detail::jsonb)
RETURNING id;

-- name: AuditPurge :execrows
DELETE FROM audit_log
WHERE at < clock_timestamp() - make_interval(days => @keep_days::int);

-- name: AuditEventCount :one
-- How many entries AuditEventPage lists for a kind ('' for all).
SELECT count(*)::bigint
FROM (
    SELECT CASE split_part(a.action, '.', 1) WHEN 'advisory' THEN 'dismissal' WHEN 'component' THEN 'dismissal'
                WHEN 'user' THEN 'account' WHEN 'token' THEN 'account' WHEN 'source' THEN 'trust' WHEN 'registry' THEN 'trust' ELSE 'other' END AS kind
    FROM audit_log a
    UNION ALL
    SELECT 'dismissal' FROM advisory_dismissals d
    WHERE d.expires_at <= clock_timestamp() AND (d.ended_at IS NULL OR d.ended_at > d.expires_at)
    UNION ALL
    SELECT 'check' FROM check_runs
) e
WHERE @kind::text = '' OR e.kind = @kind::text;

-- name: AuditEventPage :many
-- The audit log as the Audit log page and its CSV show it, newest first:
-- the audit_log rows (dismissals made and undone, accounts and tokens),
-- the dismissals whose expiry passed while they stood (derived: nothing is
-- written when a dismissal expires), and every check from check_runs.
-- kind is dismissal (dismissals and skips: advisory.*, component.*), account, check, trust (source.trust, source.pin, registry.*: a source's or a registry's keys changed) or other; '' lists every kind.
-- max_rows null: no limit (the CSV).
SELECT e.at, e.kind, e.action, e.actor, e.component, e.advisory, e.reason, e.expires_at,
       e.trigger, e.status, e.detail, e.seq
FROM (
    SELECT a.at,
           (CASE split_part(a.action, '.', 1) WHEN 'advisory' THEN 'dismissal' WHEN 'component' THEN 'dismissal'
                 WHEN 'user' THEN 'account' WHEN 'token' THEN 'account' WHEN 'source' THEN 'trust' WHEN 'registry' THEN 'trust' ELSE 'other' END)::text AS kind,
           a.action,
           coalesce(u.email, a.detail->>'by', '')::text        AS actor,
           coalesce(a.detail->>'component', '')::text          AS component,
           coalesce(a.detail->>'advisory', '')::text           AS advisory,
           coalesce(dd.reason, a.detail->>'reason', '')::text AS reason,
           dd.expires_at                                       AS expires_at,
           ''::text                                            AS trigger,
           ''::text                                            AS status,
           a.detail,
           a.id                                                AS seq
    FROM audit_log a
    LEFT JOIN users u ON u.id = a.user_id
    -- The decision a dismissal's audit row names, for its expiry.
    LEFT JOIN advisory_dismissals dd ON dd.id = (a.detail->>'dismissal')::bigint
    UNION ALL
    SELECT d.expires_at, 'dismissal', 'advisory.expire', '', d.component_code, d.advisory_id, d.reason,
           d.expires_at, '', '', jsonb_build_object('dismissal', d.id, 'dismissed_by', d.user_email), d.id
    FROM advisory_dismissals d
    WHERE d.expires_at <= clock_timestamp() AND (d.ended_at IS NULL OR d.ended_at > d.expires_at)
    UNION ALL
    SELECT r.started_at, 'check', 'check', coalesce(r.actor, ''), '', '', '', NULL, r.trigger, r.status,
           jsonb_strip_nulls(jsonb_build_object('run', r.id, 'fetched', r.sources_fetched,
                                                'not_modified', r.sources_not_modified,
                                                'failed', r.sources_failed, 'error', r.error)),
           r.id
    FROM check_runs r
) e
WHERE @kind::text = '' OR e.kind = @kind::text
ORDER BY e.at DESC, e.kind, e.seq DESC
LIMIT sqlc.narg(max_rows)::int OFFSET @skip_rows::int;
