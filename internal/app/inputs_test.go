package app

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

// A lockfile whose tree another sync wrote meanwhile was not judged: it
// is applied again at the next look, and no page says it was refused. A
// lockfile that cannot be read is.
func TestATreeMovedMeanwhileIsNoRefusal(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	st := store.New(d.Pool)
	a := &App{Store: st, Logger: slog.New(slog.DiscardHandler), Reads: catalog.New(st)}
	ctx := context.Background()
	refused := func() int {
		var n int
		d.QueryRow(t, `SELECT count(*) FROM input_refusals`).Scan(&n)
		return n
	}
	a.inputRead(ctx, readmodel.InputLockfile, "package-lock.json", fmt.Errorf("sync the installed tree: %w", store.ErrTreeMoved))
	if n := refused(); n != 0 {
		t.Fatalf("%d refusals recorded for a tree written meanwhile, want none", n)
	}
	a.inputRead(ctx, readmodel.InputLockfile, "package-lock.json", fmt.Errorf("package-lock.json line 2: broken"))
	if n := refused(); n != 1 {
		t.Fatalf("%d refusals recorded for a broken lockfile, want 1", n)
	}
}
