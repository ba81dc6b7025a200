-- +goose Up
-- The catalog finds a component by the id or an alias (a CVE or GHSA id)
-- of an advisory affecting its installed version: the advisories of its
-- result (component_results.advisories, every advisory affecting the
-- installed version, dismissed or not; a withdrawn advisory is not among
-- them). upcheck_advisory_keys is the one definition of what a search
-- matches: each advisory's id and aliases, upper-cased, so that
-- "cve-2021-44228" and "GHSA-JFH8-C2JP-5V3Q" find them too. The index makes
-- the search an indexed lookup whatever the number of components.
-- +goose StatementBegin
CREATE FUNCTION upcheck_advisory_keys(advisories jsonb)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(DISTINCT upper(k.key)), '{}')
    FROM jsonb_array_elements(CASE jsonb_typeof(advisories) WHEN 'array' THEN advisories ELSE '[]' END) AS a(adv)
    CROSS JOIN LATERAL (
        SELECT a.adv->>'id'
        UNION ALL
        SELECT jsonb_array_elements_text(CASE jsonb_typeof(a.adv->'aliases') WHEN 'array' THEN a.adv->'aliases' ELSE '[]' END)
    ) AS k(key)
    WHERE k.key IS NOT NULL
$$;
-- +goose StatementEnd

CREATE INDEX component_results_advisory_keys ON component_results USING gin (upcheck_advisory_keys(advisories));

-- +goose Down
DROP INDEX component_results_advisory_keys;
DROP FUNCTION upcheck_advisory_keys(jsonb);
