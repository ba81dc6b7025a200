-- +goose Up
-- The exposure clock: since when this site has known of each security
-- problem of a component, so that the pages can say "security fix
-- available for 3 days" and /metrics can export the oldest one.
--
-- A problem is an advisory affecting the installed version (by id) or a
-- security release newer than it (by version). The result write records
-- the problems of each result it writes, in the same statement
-- (queries/component_results.sql): a problem new to the component is
-- stamped with the write's time, one it already had keeps its stamp, and
-- one the result no longer has is forgotten, so a problem that goes away
-- and comes back starts again. Dismissals are not applied here but when
-- read (component_exposure), as for every other flag: a dismissed advisory
-- does not count, and a restored one counts from when it was first seen.

-- Every security release newer than the installed version (security_version
-- is only the newest): a newer security release does not restart the clock
-- of a component whose older fix is still not installed.
ALTER TABLE component_results ADD COLUMN security_versions text[] NOT NULL DEFAULT '{}';
UPDATE component_results SET security_versions = ARRAY[security_version] WHERE security_version IS NOT NULL;

-- Deleted with the component's result (a component removed, or its source
-- changed). A later migration that truncates component_results must
-- truncate this table too.
CREATE TABLE security_problems (
    code          text        NOT NULL REFERENCES component_results (code) ON DELETE CASCADE,
    kind          text        NOT NULL CHECK (kind IN ('advisory', 'release')),
    -- The advisory's id, or the security release's version.
    problem       text        NOT NULL,
    first_seen_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (code, kind, problem)
);

-- What the stored results know now is taken as first seen now: nothing
-- recorded when they were first seen.
INSERT INTO security_problems (code, kind, problem)
SELECT code, 'advisory', unnest(advisory_ids) FROM component_results
UNION
SELECT code, 'release', unnest(security_versions) FROM component_results;

-- The order of severities, for "most urgent first": an unknown or missing
-- severity comes last.
-- +goose StatementBegin
CREATE FUNCTION upcheck_severity_rank(severity text)
RETURNS integer
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE lower(severity)
        WHEN 'critical' THEN 4
        WHEN 'high'     THEN 3
        WHEN 'medium'   THEN 2
        WHEN 'moderate' THEN 2
        WHEN 'low'      THEN 1
        ELSE 0
    END
$$;
-- +goose StatementEnd

-- The exposure of each component with a security problem now: since when
-- the oldest of its problems that count has been known. Only components
-- with a current evaluation (component_state.evaluated) have a row; then
-- security_problems holds exactly the problems of that result (the result
-- write keeps them in step). A security release counts while
-- component_state says security; an advisory while it is among
-- component_state's open advisories (dismissals as component_state
-- applies them). That list is JSON built per component, so it is only
-- consulted for a component with a standing dismissal: without one, every
-- advisory of the result is open whenever component_state says vulnerable.
-- The summary, the catalog, the detail page and /metrics read this view.
-- It reads component_state's columns only, and is built on it: a migration
-- that replaces component_state must drop and create this view again.
CREATE VIEW component_exposure AS
SELECT p.code,
       min(p.first_seen_at) AS security_since
FROM security_problems p
JOIN component_state cs ON cs.code = p.code
WHERE cs.evaluated
  AND CASE p.kind
          WHEN 'release' THEN cs.security
          ELSE cs.vulnerable
               AND (p.code NOT IN (SELECT d.component_code FROM advisory_dismissals d WHERE d.ended_at IS NULL)
                    OR cs.open_advisories @> jsonb_build_array(jsonb_build_object('id', p.problem)))
      END
GROUP BY p.code;

-- +goose Down
DROP VIEW component_exposure;
DROP FUNCTION upcheck_severity_rank(text);
DROP TABLE security_problems;
ALTER TABLE component_results DROP COLUMN security_versions;
