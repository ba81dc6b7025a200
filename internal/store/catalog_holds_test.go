package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// A catalog snapshot holds until a write to any table the read model reads
// commits, or until the clock turns one of its flags (a source going stale,
// a document or a dismissal expiring); a write elsewhere changes nothing.
func TestCatalogSnapshotHoldsUntilAWriteOrTheClockTurnsAFlag(t *testing.T) {
	t.Parallel()
	b := setup(t)
	u := b.site(t)
	ctx := context.Background()
	holds := func() bool {
		t.Helper()
		_, snap, err := b.st.CatalogRows(ctx, readmodel.DevSeparate)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := b.st.ReadModelUnchanged(ctx, snap)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Fatal("a snapshot does not hold right after it was read")
		}
		return true
	}
	// after reads a snapshot, runs sql, and reports whether it still holds.
	after := func(sql string) bool {
		t.Helper()
		_, snap, err := b.st.CatalogRows(ctx, readmodel.DevSeparate)
		if err != nil {
			t.Fatal(err)
		}
		b.exec(t, sql)
		ok, err := b.st.ReadModelUnchanged(ctx, snap)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	holds()
	for _, sql := range []string{
		`INSERT INTO components (code, name, installed_version) VALUES ('shop', 'Shop', '1.0.0')`,
		`UPDATE components SET name = 'Shop!' WHERE code = 'shop'`,
		`UPDATE sources SET last_attempt_at = clock_timestamp()`,
		`UPDATE component_results SET epoch = epoch + 1`,
		`INSERT INTO security_problems (code, kind, problem) VALUES ('blog', 'advisory', 'ACME-1')`,
		`INSERT INTO advisory_dismissals (component_code, advisory_id, user_id, user_email, reason, severity, affected, fixed_in)
			VALUES ('blog', 'ACME-2', ` + fmt.Sprint(u.ID) + `, 'ada@example.org', 'accepted', 'low', '*', '9.0.0')`,
		`DELETE FROM components WHERE code = 'shop'`,
	} {
		if after(sql) {
			t.Errorf("the snapshot still holds after %s", sql)
		}
	}
	if !after(`INSERT INTO check_runs (trigger, actor, status) VALUES ('manual', 'a@x', 'cooldown')`) {
		t.Error("a write to a table the read model does not read made the snapshot not hold")
	}

	// The clock: the source's document expires 1.5 s from now, the
	// dismissal 3 s from now; each instant turns the snapshot by itself.
	b.exec(t, `UPDATE sources SET expires_at = clock_timestamp() + interval '1500 milliseconds'`)
	b.exec(t, `UPDATE advisory_dismissals SET expires_at = clock_timestamp() + interval '3 seconds' WHERE ended_at IS NULL`)
	for _, instant := range []string{"the document's expiry", "the dismissal's end"} {
		_, snap, err := b.st.CatalogRows(ctx, readmodel.DevSeparate)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := b.st.ReadModelUnchanged(ctx, snap); err != nil || !ok {
			t.Fatalf("fresh snapshot: holds %v, %v", ok, err)
		}
		wait.For(t, "the snapshot to stop holding at "+instant, wait.Guard, func() (bool, error) {
			ok, err := b.st.ReadModelUnchanged(ctx, snap)
			return !ok, err
		})
	}
	// Now the document has expired (the source is stale for good) and the
	// dismissal too: nothing is due, and the snapshot holds again.
	holds()
}
