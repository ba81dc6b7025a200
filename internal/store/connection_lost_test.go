package store_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/upcheck/upcheck/internal/store"
)

// One meaning, on real errors of a real server: a statement that ran past
// statement_timeout is unavailable (try again later: the 503 of the
// pages, a settle tried again, and the lost lease that fencedError makes of
// it under a cancelled context) but not a lost connection, which
// updatecheck records as connection_lost; a connection the server ended is
// both.
func TestStatementTimeoutIsUnavailableNotConnectionLost(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	conn, err := b.db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()

	// The store maps what a transaction's function returns.
	timedOut := b.st.WithTx(ctx, func(*store.Tx) error {
		if _, err := conn.Exec(ctx, "SET statement_timeout = '50ms'"); err != nil {
			t.Fatal(err)
		}
		_, err := conn.Exec(ctx, "SELECT pg_sleep(10)")
		return err
	})
	if !errors.Is(timedOut, store.ErrStatementTimeout) {
		t.Fatalf("a statement past statement_timeout gave %v, want store.ErrStatementTimeout", timedOut)
	}
	if !store.IsUnavailable(timedOut) || store.IsConnectionLost(timedOut) {
		t.Errorf("statement timeout: IsUnavailable %v, IsConnectionLost %v; want true, false",
			store.IsUnavailable(timedOut), store.IsConnectionLost(timedOut))
	}

	var pid int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	b.db.MustExec(t, "SELECT pg_terminate_backend($1, 10000)", pid) // waits for it to end
	ended := b.st.WithTx(ctx, func(*store.Tx) error {
		_, err := conn.Exec(ctx, "SELECT 1")
		return err
	})
	if ended == nil || errors.Is(ended, store.ErrStatementTimeout) {
		t.Fatalf("a terminated connection gave %v", ended)
	}
	if !store.IsUnavailable(ended) || !store.IsConnectionLost(ended) {
		t.Errorf("terminated connection (%v): IsUnavailable %v, IsConnectionLost %v; want true, true",
			ended, store.IsUnavailable(ended), store.IsConnectionLost(ended))
	}
}

// A local file's failure is not the database's: a syscall.Errno (which Go
// makes a net.Error) outside a network operation, as a full disk or a
// missing UPCHECK_FEED_DIR gives, is neither unavailable nor a lost
// connection; the same errno from a socket's read is both.
func TestLocalFileErrorIsNotConnectionLost(t *testing.T) {
	t.Parallel()
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.ENOENT, syscall.ENOTDIR, syscall.EACCES} {
		local := fmt.Errorf("spool feed: %w", &fs.PathError{Op: "write", Path: "/var/tmp/upcheck/x.download", Err: errno})
		if store.IsUnavailable(local) || store.IsConnectionLost(local) {
			t.Errorf("%v: IsUnavailable %v, IsConnectionLost %v; want false, false", local, store.IsUnavailable(local), store.IsConnectionLost(local))
		}
	}
	socket := fmt.Errorf("failed to receive message: %w", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)})
	if !store.IsUnavailable(socket) || !store.IsConnectionLost(socket) {
		t.Errorf("%v: IsUnavailable %v, IsConnectionLost %v; want true, true", socket, store.IsUnavailable(socket), store.IsConnectionLost(socket))
	}
}
