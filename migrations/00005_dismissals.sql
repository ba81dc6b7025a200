-- +goose Up
-- Accountable risk acceptance.
--
-- A dismissal says who accepted which advisory of which component, when,
-- why (a required reason), until when (an optional expiry) and what the
-- advisory said at that moment (its fingerprint: severity, affected range,
-- fixed-in version). The table is the history of those decisions: a new
-- dismissal of the same advisory ends the one before it ("replaced"),
-- restoring an advisory ends it ("undone"), and an ended row is kept.
-- No foreign key to components: a component that leaves the manifest and
-- comes back keeps its dismissals. Deleting a user keeps what they
-- dismissed.
--
-- A dismissal is *in force* (upcheck_dismissal_in_force, the one
-- definition) while it has not ended, its expiry has not passed (judged
-- with clock_timestamp() when read, like upcheck_stale), and the advisory
-- as the current result lists it still has the fingerprint that was
-- dismissed. Any change of severity, affected range or fixed-in version,
-- in either direction, makes the advisory count again: what was accepted
-- is no longer what is published. Nothing is written when a dismissal
-- expires or its advisory changes; the read model judges it when it reads.
CREATE TABLE advisory_dismissals (
    component_code text        NOT NULL,
    advisory_id    text        NOT NULL,
    user_id        bigint      REFERENCES users (id) ON DELETE SET NULL,
    dismissed_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    id             bigserial   PRIMARY KEY,
    -- Who, as they were called when they dismissed: the user row may go.
    user_email     text,
    reason         text        NOT NULL,
    -- null: until someone restores the advisory or it changes.
    expires_at     timestamptz,
    -- The advisory as it was dismissed; '' for a member it did not have.
    severity       text        NOT NULL DEFAULT '',
    affected       text        NOT NULL DEFAULT '',
    fixed_in       text        NOT NULL DEFAULT '',
    -- When and how the decision ended; null while it stands (expired or
    -- not: an expiry is judged when read).
    ended_at       timestamptz,
    ended_how      text        CHECK (ended_how IN ('undone', 'replaced')),
    -- Declared in the manifest (docs/policy.md "Dismissals and skips as
    -- code"): written by the manifest sync alone, ended when the manifest
    -- no longer declares it, never undone in the AdminCP. Its advisory was
    -- reviewed by id with the site's code, so it holds whatever the
    -- advisory says later, until its expiry.
    from_manifest  boolean     NOT NULL DEFAULT false,
    CONSTRAINT advisory_dismissals_reason CHECK (btrim(reason, E' \t\r\n') <> ''),
    CONSTRAINT advisory_dismissals_reason_length CHECK (char_length(reason) <= 500),
    -- "In the future when set": judged against the moment of dismissal,
    -- which the insert takes from clock_timestamp().
    -- (A manifest may declare one that has already lapsed: it is shown as
    -- expired.)
    CONSTRAINT advisory_dismissals_expiry CHECK (from_manifest OR expires_at IS NULL OR expires_at > dismissed_at),
    CONSTRAINT advisory_dismissals_ended CHECK ((ended_at IS NULL) = (ended_how IS NULL))
);

-- At most one standing decision per component and advisory.
CREATE UNIQUE INDEX advisory_dismissals_standing
    ON advisory_dismissals (component_code, advisory_id) WHERE ended_at IS NULL;
-- The audit log lists expiries by time.
CREATE INDEX advisory_dismissals_expires_at
    ON advisory_dismissals (expires_at) WHERE expires_at IS NOT NULL;

-- Whether a dismissal's advisory id names this advisory: its id or one of
-- its aliases (upcheck_advisory_keys, case-insensitive), so that a
-- dismissal covers every alias: an advisory dismissed by its GHSA id
-- stays dismissed when a publisher's advisory sharing the alias is merged
-- with it and the merged advisory is listed under the publisher's id
-- (docs/feeds.md "One advisory, many origins").
-- +goose StatementBegin
CREATE FUNCTION upcheck_dismissal_names(advisory_id text, advisory jsonb)
RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT advisory_id = advisory->>'id'
        OR upper(advisory_id) = ANY(upcheck_advisory_keys(jsonb_build_array(advisory)))
$$;
-- +goose StatementEnd

-- The one definition of a dismissal in force, for one advisory as a
-- current result lists it (an element of component_results.advisories).
-- STABLE although it reads clock_timestamp(), as upcheck_stale and for the
-- same reason.
-- +goose StatementBegin
CREATE FUNCTION upcheck_dismissal_in_force(d advisory_dismissals, advisory jsonb)
RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT d.ended_at IS NULL
       AND upcheck_dismissal_names(d.advisory_id, advisory)
       AND (d.expires_at IS NULL OR d.expires_at > clock_timestamp())
       AND (d.from_manifest
            OR d.severity = coalesce(advisory->>'severity', '')
           AND d.affected = coalesce(advisory->>'affected', '')
           AND d.fixed_in = coalesce(advisory->>'fixed_in', ''))
$$;
-- +goose StatementEnd

-- The dismissals in force, against each component's stored result (the
-- read model keeps only current results, so a stale row here changes
-- nothing it shows). advisory_id is the id the result lists the advisory
-- under, which the dismissal may name by an alias.
CREATE VIEW advisory_dismissals_in_force AS
SELECT d.id, d.component_code, (a->>'id')::text AS advisory_id
FROM advisory_dismissals d
JOIN component_results r ON r.code = d.component_code
CROSS JOIN LATERAL jsonb_array_elements(r.advisories) a
WHERE d.ended_at IS NULL
  AND upcheck_dismissal_in_force(d, a);

-- +goose Down
DROP VIEW advisory_dismissals_in_force;
DROP FUNCTION upcheck_dismissal_in_force(advisory_dismissals, jsonb);
DROP FUNCTION upcheck_dismissal_names(text, jsonb);
DROP TABLE advisory_dismissals;
