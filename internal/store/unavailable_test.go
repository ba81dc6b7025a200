package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/puddle/v2"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

// A session the server ended is the database being away, not a bug: an
// instance paused inside a transaction comes back to an idle-in-transaction
// timeout (25P03), which the fault workload saw answered 500.
func TestIsUnavailableServerEndedSessions(t *testing.T) {
	for _, tc := range []struct {
		code string
		want bool
	}{
		{pgerrcode.IdleInTransactionSessionTimeout, true}, {pgerrcode.IdleSessionTimeout, true},
		{pgerrcode.AdminShutdown, true}, {pgerrcode.ConnectionFailure, true}, {pgerrcode.TooManyConnections, true},
		{pgerrcode.UniqueViolation, false}, {pgerrcode.UndefinedTable, false}, {store.SQLStateLeaseNotHeld, false},
	} {
		err := fmt.Errorf("acquire lease: %w", &pgconn.PgError{Severity: "FATAL", Code: tc.code})
		if got := store.IsUnavailable(err); got != tc.want {
			t.Errorf("IsUnavailable(SQLSTATE %s) = %v, want %v", tc.code, got, tc.want)
		}
	}
	if store.IsUnavailable(errors.New("plain")) {
		t.Error("a plain error counts as unavailable")
	}
}

// A closed pool is the database being away for this process. pgxpool hands
// back puddle's ErrClosedPool as it is (it has no error of its own for it),
// which is why store imports puddle for that one value.
func TestClosedPoolIsUnavailable(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, d.URL)
	if err != nil {
		t.Fatal(err)
	}
	pool.Close()
	_, err = store.New(pool).UserByEmail(ctx, "ada@example.org")
	if !errors.Is(err, puddle.ErrClosedPool) {
		t.Errorf("a closed pool's error is %v, not puddle.ErrClosedPool", err)
	}
	if !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("a closed pool's error is %v, want ErrUnavailable", err)
	}
}
