package catalog

import (
	"context"
	"sync"
	"testing"
)

// Detail reads the component and its dismissals in one snapshot: while
// another connection dismisses gallery's ACME-2 and takes the dismissal
// back as fast as it can, every page read in between says the same thing
// of it twice: counted as dismissed exactly when its dismissal is shown
// (never a page that counts it dismissed and shows no dismissal, or shows
// one in force and counts it open).
func TestDetailIsOneSnapshot(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.standardSite()
	ctx := context.Background()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := b.db.Pool.Exec(ctx, `INSERT INTO advisory_dismissals (component_code, advisory_id, reason, severity, affected)
				VALUES ('gallery', 'ACME-2', 'toggled', 'high', '<=3.0.0')`); err != nil {
				t.Error(err)
				return
			}
			if _, err := b.db.Pool.Exec(ctx, `DELETE FROM advisory_dismissals WHERE component_code = 'gallery'`); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var dismissed, open, mixed int
	for range 600 {
		d, err := b.reads.Detail(ctx, "gallery")
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range d.Advisories {
			if a.ID != "ACME-2" {
				continue
			}
			switch shown := a.Dismissal != nil && a.Dismissal.InForce; {
			case a.Dismissed != shown:
				mixed++
			case a.Dismissed:
				dismissed++
			default:
				open++
			}
		}
	}
	close(done)
	wg.Wait()
	if mixed > 0 {
		t.Errorf("%d pages of 600 mixed two moments (counted dismissed without the dismissal in force, or the reverse); %d dismissed, %d open",
			mixed, dismissed, open)
	}
	if dismissed == 0 || open == 0 {
		t.Errorf("the writer raced no read: %d pages dismissed, %d open", dismissed, open)
	}
}
