package store_test

import (
	"context"
	"testing"

	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

// The sources the Sources page and the local summary say (source_state)
// are those of the site upcheck runs beside: a source that only another
// site's components use is neither listed nor counted failing there, and
// one both use counts the local site's components alone.
func TestSourceStateIsTheLocalSites(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	d.MustExec(t, `INSERT INTO sites (name, token_hash) VALUES ('acme', sha256('t'))`)
	d.MustExec(t, `INSERT INTO components (site_id, code, name, installed_version, source_url)
		VALUES ((SELECT id FROM sites WHERE name = 'acme'), 'secret-pkg', 'secret-pkg', '1.0.0', 'npm:secret-pkg'),
		       ((SELECT id FROM sites WHERE name = 'acme'), 'shared', 'shared', '1.0.0', 'npm:shared'),
		       (1, 'shared', 'shared', '2.0.0', 'npm:shared')`)
	d.MustExec(t, `INSERT INTO sources (url, last_error, last_error_at, consecutive_failures, epoch)
		VALUES ('npm:secret-pkg', 'refused', clock_timestamp(), 3, 1)`)
	var urls []string
	var used []int64
	rows, err := d.Pool.Query(context.Background(), `SELECT url, components FROM source_state ORDER BY url`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var u string
		var n int64
		if err := rows.Scan(&u, &n); err != nil {
			t.Fatal(err)
		}
		urls, used = append(urls, u), append(used, n)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if len(urls) != 1 || urls[0] != "npm:shared" || used[0] != 1 {
		t.Errorf("source_state: %v used by %v; want only npm:shared, used by the local site's one component", urls, used)
	}
}
