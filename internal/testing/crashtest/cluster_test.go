//go:build crash

package crashtest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/upcheck/upcheck/internal/dev/devdb"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

// ownCluster is a private cluster for a scenario that stops PostgreSQL
// (.data/crash-NAME, kept between runs) and a fresh database on it. The
// cluster is started again when the test ends, whatever happened.
func ownCluster(t *testing.T, name string) (*devdb.Cluster, *pgtest.DB) {
	t.Helper()
	ctx := context.Background()
	cl, err := devdb.Ensure(ctx, filepath.Join("..", "..", "..", ".data", "crash-"+name), devdb.Options{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Start(context.Background()) }) // never leave it stopped
	db := fmt.Sprintf("%s_%d", strings.ReplaceAll(name, "-", "_"), time.Now().UnixNano())
	if err := cl.CreateDatabase(ctx, db); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, cl.URL(db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return cl, &pgtest.DB{Name: db, URL: cl.URL(db), Pool: pool}
}
