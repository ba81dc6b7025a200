-- +goose Up
-- A registered site's own update policy (docs/design.md "Many sites",
-- docs/policy.md): the object a manifest's "policy" holds, as
-- release.Policy.Text writes it ('' the default: every release at once).
-- Every component of the site is offered under it (components.policy),
-- written by its pushes and by a change of it. The local site's policy is
-- its manifest's or its lockfile's --policy, never stored here.
ALTER TABLE sites ADD COLUMN policy text NOT NULL DEFAULT ''
    CONSTRAINT sites_policy_registered CHECK (id <> 1 OR policy = '');

-- +goose Down
ALTER TABLE sites DROP COLUMN policy;
