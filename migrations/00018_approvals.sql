-- +goose Up
-- Approvals pinned to a version (docs/policy.md "Approvals"): under a
-- policy whose "approve" is "scripts", an update whose diff against the
-- installed version adds or changes an install-time script, or declares a
-- dependency from outside the registry, is held until an admin approves
-- that exact version and what it brings: digest is the SHA-256 of what
-- needs approval, each install script by the SHA-256 of its whole text
-- and each outside source by its spec (updatecheck.ApprovalNeed). A
-- release that changes them has another digest, and is held again. An
-- approval declared in the manifest (from_manifest) is written by the
-- manifest sync alone. No foreign key: as a skip, an approval outlives
-- its component leaving the manifest for a while.
CREATE TABLE component_approvals (
    code          text        NOT NULL,
    version       text        NOT NULL,
    digest        text        NOT NULL CHECK (digest ~ '^[0-9a-f]{64}$'),
    reason        text        NOT NULL,
    -- Who, as they were called (a user's email, "manifest", "command line").
    actor         text        NOT NULL,
    user_id       bigint      REFERENCES users (id) ON DELETE SET NULL,
    from_manifest boolean     NOT NULL DEFAULT false,
    approved_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (code, version, digest),
    CONSTRAINT component_approvals_reason CHECK (btrim(reason, E' \t\r\n') <> '' AND char_length(reason) <= 500)
);

-- The approvals of a component as an evaluation reads them, one line
-- "VERSION DIGEST" each, in byte order ('' none): an input of
-- evaluation, as the skip is, which the guarded write compares
-- (component_results.approvals).
-- +goose StatementBegin
CREATE FUNCTION upcheck_approvals_of(component text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT coalesce(string_agg(a.version || ' ' || a.digest, E'\n' ORDER BY a.version || ' ' || a.digest COLLATE "C"), '')
    FROM component_approvals a
    WHERE a.code = component
$$;
-- +goose StatementEnd

-- The approvals (upcheck_approvals_of) a result was evaluated under.
ALTER TABLE component_results ADD COLUMN approvals text NOT NULL DEFAULT '';

CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON component_approvals
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();

-- +goose Down
DROP TRIGGER read_model_changed ON component_approvals;
ALTER TABLE component_results DROP COLUMN approvals;
DROP FUNCTION upcheck_approvals_of(text);
DROP TABLE component_approvals;
