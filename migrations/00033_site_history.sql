-- +goose Up
-- A registered site's history (docs/design.md "A site's pages"): its
-- pushes are its audit rows (site.push, detail->>'site' its name), read
-- newest first for one site; this partial index keeps that read to the
-- site's own rows whatever the fleet's audit log holds (10,000 sites
-- pushing daily add 10,000 rows a day).
CREATE INDEX audit_log_site_push ON audit_log ((detail->>'site'), id DESC) WHERE action = 'site.push';

-- A refused push is a refused input of its site, as the local site's
-- manifest and lockfile are: one row per site and input while it is
-- refused, gone when the site's next push is accepted. The local site's
-- rows stay site 1's; a removed site's go with it.
ALTER TABLE input_refusals ADD COLUMN site_id bigint NOT NULL DEFAULT 1 REFERENCES sites (id) ON DELETE CASCADE;
ALTER TABLE input_refusals DROP CONSTRAINT input_refusals_pkey;
ALTER TABLE input_refusals ADD PRIMARY KEY (site_id, input);

-- +goose Down
DELETE FROM input_refusals WHERE site_id <> 1;
ALTER TABLE input_refusals DROP CONSTRAINT input_refusals_pkey;
ALTER TABLE input_refusals DROP COLUMN site_id;
ALTER TABLE input_refusals ADD PRIMARY KEY (input);
DROP INDEX audit_log_site_push;
