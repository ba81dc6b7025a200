-- +goose Up
-- The impact of an advisory on the fleet (queries/fleet.sql,
-- FleetImpactAdvisoryEver and FleetImpactAdvisoryCounts) finds the
-- look-back's findings of the advisory by its id or an alias, as
-- tree_findings_keys finds the fleet's findings: by the advisory's keys,
-- upper-cased, from an index, rather than by reading every look-back
-- finding of every site with a function call a row (38 ms of 45 for
-- 183 rows at 1,000 sites: docs/performance.md "The fleet").

-- The keys of one advisory (its id and aliases, upper-cased), as
-- upcheck_advisory_keys reads a list of them ('[]' || the advisory: a
-- list of one, immutable, as an index needs).
-- +goose StatementBegin
CREATE FUNCTION upcheck_advisory_keys_of(advisory jsonb)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT upcheck_advisory_keys('[]'::jsonb || advisory)
$$;
-- +goose StatementEnd
CREATE INDEX tree_exposures_keys ON tree_exposures USING gin (upcheck_advisory_keys_of(advisory));

-- +goose Down
DROP INDEX tree_exposures_keys;
DROP FUNCTION upcheck_advisory_keys_of(jsonb);
