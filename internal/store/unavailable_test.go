package store_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/upcheck/upcheck/internal/store"
)

// A session the server ended is the database being away, not a bug: an
// instance paused inside a transaction comes back to an idle-in-transaction
// timeout (25P03), which the fault workload saw answered 500.
func TestIsUnavailableServerEndedSessions(t *testing.T) {
	for _, tc := range []struct {
		code string
		want bool
	}{
		{"25P03", true}, {"57P05", true}, {"57P01", true}, {"08006", true}, {"53300", true},
		{"23505", false}, {"42P01", false}, {"UL001", false},
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
