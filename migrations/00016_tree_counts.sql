-- +goose Up
-- What in each component's dependencies needs attention, under the
-- setting (dev_mode, UPCHECK_LOCKFILE_DEV): the rows of
-- upcheck_tree_attention (the one definition; a look-back finding is the
-- site's, not a component's, and is left out) on every installed
-- instance that the component brings in (tree_packages.components), its
-- own instance left out (its package reached as a direct dependency of
-- the site: its own findings are the component's, shown as such), one
-- row per instance and finding. The catalog counts it ("Up to date · 2
-- vulnerable dependencies") and the component's page lists it, each with
-- its instance's path and fix.
-- +goose StatementBegin
CREATE FUNCTION upcheck_component_tree_attention(dev_mode text)
RETURNS TABLE (code text, kind text, name text, version text, advisory_id text, malicious boolean, instance_id text)
LANGUAGE sql STABLE AS $$
    SELECT c.code, a.kind, a.name, a.version, a.advisory_id, a.malicious, p.id
    FROM upcheck_tree_attention(dev_mode) a
    JOIN tree_packages p ON p.name = a.name AND p.version = a.version AND p.source NOT IN ('link', 'file')
    CROSS JOIN LATERAL unnest(p.components) AS c(code)
    JOIN components k ON k.code = c.code
    WHERE a.kind <> 'exposed'
      AND NOT (p.name IS NOT DISTINCT FROM k.package
               AND EXISTS (SELECT 1 FROM jsonb_array_elements(p.via) AS v(e) WHERE jsonb_array_length(v.e->'path') = 1))
$$;
-- +goose StatementEnd

-- The catalog snapshot reads it; the findings already tell the read
-- model's cache when they change (00013). A lockfile sync that rewrites
-- tree_packages (a package added, changed or removed: which components
-- bring a package in can change without any finding changing) now does
-- too. An unchanged re-sync writes tree_state alone and turns nothing.
CREATE TRIGGER read_model_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON tree_packages
    FOR EACH STATEMENT EXECUTE FUNCTION upcheck_read_model_changed();

-- +goose Down
DROP TRIGGER read_model_changed ON tree_packages;
DROP FUNCTION upcheck_component_tree_attention(text);
