// Package store is upcheck's PostgreSQL adapter: it owns the connection pool's
// transactions, turns domain calls into the sqlc queries of internal/db, maps
// rows to plain Go values and PostgreSQL errors to the sentinel errors below.
// Generated types never leave this package.
package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/puddle/v2"

	"github.com/upcheck/upcheck/internal/db"
)

var (
	// ErrNotFound is returned when a row the caller asked for does not exist.
	ErrNotFound = errors.New("not found")
	// ErrLockTimeout is returned when a statement gave up waiting for a lock
	// (lock_timeout): another transaction holds it.
	ErrLockTimeout = errors.New("lock wait timed out")
	// ErrUnavailable means the database could not be reached: the caller
	// should answer "try again later" (503), never "not signed in".
	ErrUnavailable = errors.New("database unavailable")
	// ErrStatementTimeout means a statement ran past statement_timeout.
	// The database is unavailable for the caller (IsUnavailable: try again
	// later), but it answered: it is not a lost connection
	// (IsConnectionLost), and a fenced write that meets it while its
	// context is alive has not lost its lease.
	ErrStatementTimeout = errors.New("statement ran past its time limit")
)

// rollbackTimeout bounds the rollback of a transaction whose context was
// cancelled; the rollback itself must not be cancelled with it.
const rollbackTimeout = 5 * time.Second

// Executor runs upcheck's operations on one db.DBTX: the pool, as Store,
// or one transaction, as Tx. Each operation is written once: on Executor
// when it is right on either, so both Store and Tx have it; on Store when
// it needs the pool (a transaction or a batch of its own); on Tx when it is
// only right inside a transaction. executor_test.go keeps it so.
type Executor struct {
	dbtx db.DBTX
	q    *db.Queries
}

// Store is the database behind upcheck: Executor over the pool, and what
// needs the pool itself.
type Store struct {
	Executor
	pool *pgxpool.Pool
}

// New wraps a pool.
func New(pool *pgxpool.Pool) *Store {
	return &Store{Executor: Executor{dbtx: pool, q: db.New()}, pool: pool}
}

// Ping checks that the database answers. A failure is tried again a few
// times: after a database restart the pool may still hold connections that
// died idle, and it drops each on its first failure, so a database that is
// back is reported back at once.
func (s *Store) Ping(ctx context.Context) error {
	err := s.pool.Ping(ctx)
	for range 3 {
		if err == nil || ctx.Err() != nil {
			break
		}
		err = s.pool.Ping(ctx)
	}
	return err
}

// Tx is one open transaction: Executor over it, so that what must commit
// together (a change and its audit row, a password and the sessions it
// ends) does, and the operations that are only right inside a transaction:
// the lease's locks and the writes it fences, the events and messages whose
// delivery jobs must be inserted with them, row locks held until the commit.
type Tx struct {
	Executor
	tx pgx.Tx
}

// WithTx runs fn in a transaction and commits when fn returns nil. A failed or
// cancelled fn is rolled back on a context that is not cancelled, so the
// connection goes back to the pool clean.
func (s *Store) WithTx(ctx context.Context, fn func(*Tx) error) error {
	return s.withTx(ctx, pgx.TxOptions{}, fn)
}

// ReadTx runs fn in a read-only, repeatable-read transaction: every read
// fn makes sees the database at one moment, so what several reads compose
// (a detail page and its dismissals) never mixes two moments.
func (s *Store) ReadTx(ctx context.Context, fn func(*Tx) error) error {
	return s.withTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

func (s *Store) withTx(ctx context.Context, opts pgx.TxOptions, fn func(*Tx) error) error {
	tx, err := s.pool.BeginTx(ctx, opts)
	if err != nil {
		return mapError(fmt.Errorf("begin: %w", err))
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
		defer cancel()
		_ = tx.Rollback(rctx) // no-op after a commit
	}()
	if err := fn(&Tx{Executor: Executor{dbtx: tx, q: s.q}, tx: tx}); err != nil {
		return mapError(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return mapError(fmt.Errorf("commit: %w", err))
	}
	return nil
}

// The SQLSTATEs that upcheck's own PL/pgSQL functions raise; PostgreSQL's
// own codes are pgerrcode's constants.
const (
	// sqlstateLeaseNotHeld is raised by upcheck_lease_fence when the owner
	// does not hold a live lease (ErrLeaseNotHeld).
	sqlstateLeaseNotHeld = "UL001"
	// sqlstateEventsToQueue is raised by upcheck_nothing_to_queue when an
	// enabled channel may lack an event (ErrEventsToQueue).
	sqlstateEventsToQueue = "UN001"
)

// mapError turns PostgreSQL and pgx errors into this package's sentinels,
// keeping the original in the chain for logs.
func mapError(err error) error {
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	case errors.As(err, &pgErr) && pgErr.Code == sqlstateLeaseNotHeld:
		return fmt.Errorf("%w: %w", ErrLeaseNotHeld, err)
	case errors.As(err, &pgErr) && pgErr.Code == sqlstateEventsToQueue:
		return fmt.Errorf("%w: %w", ErrEventsToQueue, err)
	case errors.As(err, &pgErr) && pgErr.Code == pgerrcode.LockNotAvailable:
		return fmt.Errorf("%w: %w", ErrLockTimeout, err)
	case errors.As(err, &pgErr) && pgErr.Code == pgerrcode.QueryCanceled && strings.Contains(pgErr.Message, "statement timeout"):
		// query_canceled is also what a cancelled context produces; only
		// the server's own timeout says so in its message.
		return fmt.Errorf("%w: %w", ErrStatementTimeout, err)
	case IsUnavailable(err):
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

// IsUnavailable reports whether err means "the database did not answer,
// or not in time" rather than "the database said no": connection failures,
// a closed pool, timeouts (a statement that ran past statement_timeout
// included), a cancelled statement, and the server errors a database sends
// while starting, stopping or out of connections. Callers answer those
// with "try again later" (503), never with "not signed in". Whether the
// connection was lost is the narrower IsConnectionLost.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, puddle.ErrClosedPool) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		pgconn.Timeout(err) || pgconn.SafeToRetry(err) {
		return true
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) || isNetworkError(err) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgerrcode.IsConnectionException(pgErr.Code), pgerrcode.IsInsufficientResources(pgErr.Code): // too_many_connections among them
			return true
		case pgErr.Code == pgerrcode.AdminShutdown, pgErr.Code == pgerrcode.CrashShutdown, pgErr.Code == pgerrcode.CannotConnectNow:
			return true
		case pgErr.Code == pgerrcode.IdleInTransactionSessionTimeout, pgErr.Code == pgerrcode.IdleSessionTimeout: // the server ended the session
			return true
		case pgErr.Code == pgerrcode.QueryCanceled: // statement_timeout
			return true
		}
	}
	return false
}

// isNetworkError: a network operation failed (a socket's dial, read or
// write: *net.OpError, a DNS lookup, a closed connection). A bare
// syscall.Errno also satisfies net.Error, but one outside a network
// operation is a local system call's failure (a file that cannot be
// written in UPCHECK_FEED_DIR: ENOSPC, ENOENT, ENOTDIR), never the
// database going away: every failure of a socket reaches here inside a
// *net.OpError, which is found first.
func isNetworkError(err error) bool {
	var netErr net.Error
	if !errors.As(err, &netErr) {
		return false
	}
	_, bare := netErr.(syscall.Errno)
	return !bare
}

// IsConnectionLost reports whether err means the database could not be
// reached: IsUnavailable, except a statement that ran past its time limit
// (ErrStatementTimeout), where the database answered. A check that meets
// it was cut off from the database (its run is recorded connection_lost).
func IsConnectionLost(err error) bool {
	return IsUnavailable(err) && !errors.Is(err, ErrStatementTimeout)
}
