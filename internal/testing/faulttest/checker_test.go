//go:build faults

package faulttest

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// findings are the checker's violations, by property.
type findings map[string][]string

func (f findings) add(property, format string, args ...any) {
	if len(f[property]) < 20 { // enough to read; the count is in the summary
		f[property] = append(f[property], fmt.Sprintf(format, args...))
	} else if len(f[property]) == 20 {
		f[property] = append(f[property], "…")
	}
}

// rows runs sql on the direct pool and scans every row with scan.
func (s *system) rows(sql string, scan func(pgx.Rows) error) error {
	return queryRows(s.pool, sql, scan)
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func queryRows(q querier, sql string, scan func(pgx.Rows) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rs, err := q.Query(ctx, sql)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		if err := scan(rs); err != nil {
			return err
		}
	}
	return rs.Err()
}

// snapshot runs fn on one snapshot of the database: the workload may still
// be running (the control asks while it does, and instances go on checking
// after the faults), and an acquisition committed between two reads would
// make a later write look as if no acquisition recorded it.
func (s *system) snapshot(f findings, fn func(tx querier)) {
	ctx := context.Background()
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		f.add("checker", "begin the checker's snapshot: %v", err)
		return
	}
	defer tx.Rollback(ctx)
	fn(tx)
}

// checkLease: no two owners ever held the lease at once, epochs only grow,
// and every committed write carried the epoch of the lease as it stood at
// its commit. These read only the database, so the control runs them while
// its workload goes on.
func checkLease(f findings, tx querier) (acquired map[int64]time.Time) {
	acquired = map[int64]time.Time{}
	var prevEpoch int64 = -1
	var prevAt time.Time
	err := queryRows(tx, `SELECT epoch, acquired_at, previous_epoch, previous_owner IS NOT NULL, previous_expires_at
		FROM lease_acquisitions WHERE name = 'check' ORDER BY epoch`, func(r pgx.Rows) error {
		var epoch, prev int64
		var at time.Time
		var held bool
		var prevExpires *time.Time
		if err := r.Scan(&epoch, &at, &prev, &held, &prevExpires); err != nil {
			return err
		}
		acquired[epoch] = at
		if prev != epoch-1 {
			f.add("epochs grow by one", "epoch %d was taken over epoch %d", epoch, prev)
		}
		if prevEpoch >= 0 && !at.After(prevAt) {
			f.add("epochs grow by one", "epoch %d acquired at %s, not after epoch %d at %s", epoch, at, prevEpoch, prevAt)
		}
		if held && prevExpires != nil && prevExpires.After(at) {
			f.add("one holder at a time", "epoch %d acquired at %s while epoch %d held the lease until %s",
				epoch, at.Format(time.StampMicro), prev, prevExpires.Format(time.StampMicro))
		}
		prevEpoch, prevAt = epoch, at
		return nil
	})
	if err != nil {
		f.add("checker", "read lease_acquisitions: %v", err)
	}

	// Every committed write: its epoch must be the lease's at its commit
	// (no takeover committed in between), committed after its epoch was
	// acquired and before the next one was.
	err = queryRows(tx, `SELECT tbl, key, epoch, at, lease_epoch FROM fault_writes ORDER BY id`, func(r pgx.Rows) error {
		var tbl, key string
		var epoch, leaseEpoch int64
		var at time.Time
		if err := r.Scan(&tbl, &key, &epoch, &at, &leaseEpoch); err != nil {
			return err
		}
		if epoch != leaseEpoch {
			f.add("writes under the lease", "%s %s committed by epoch %d at %s while the lease was epoch %d's",
				tbl, key, epoch, at.Format(time.StampMicro), leaseEpoch)
		}
		if a, ok := acquired[epoch]; !ok {
			f.add("writes under the lease", "%s %s committed by epoch %d, which no acquisition recorded", tbl, key, epoch)
		} else if at.Before(a) {
			f.add("writes under the lease", "%s %s committed by epoch %d at %s, before its acquisition at %s", tbl, key, epoch, at, a)
		}
		if next, ok := acquired[epoch+1]; ok && at.After(next) {
			f.add("writes under the lease", "%s %s committed by epoch %d at %s, after epoch %d was acquired at %s",
				tbl, key, epoch, at.Format(time.StampMicro), epoch+1, next.Format(time.StampMicro))
		}
		return nil
	})
	if err != nil {
		f.add("checker", "read fault_writes: %v", err)
	}

	// An older epoch never overwrote a newer one: per row, in commit order.
	err = queryRows(tx, `SELECT tbl, key, epoch, prev FROM (
			SELECT tbl, key, epoch, lag(epoch) OVER (PARTITION BY tbl, key ORDER BY at, id) AS prev FROM fault_writes) w
		WHERE epoch < prev`, func(r pgx.Rows) error {
		var tbl, key string
		var epoch, prev int64
		if err := r.Scan(&tbl, &key, &epoch, &prev); err != nil {
			return err
		}
		f.add("epochs only grow", "%s %s: epoch %d committed over epoch %d's write", tbl, key, epoch, prev)
		return nil
	})
	if err != nil {
		f.add("checker", "read fault_writes order: %v", err)
	}
	return acquired
}

// checkRuns: the stored rows carry known epochs, refused runs hold no
// epoch and left no write, each acquisition made at most one run, and
// every run's status is one of the documented ones.
func checkRuns(f findings, tx querier, acquired map[int64]time.Time) {
	err := queryRows(tx, `SELECT 'sources', url, epoch FROM sources
		UNION ALL SELECT 'component_results', code, epoch FROM component_results
		UNION ALL SELECT 'source_sequences', url, epoch FROM source_sequences
		UNION ALL SELECT 'notification_events', key, epoch FROM notification_events WHERE epoch IS NOT NULL`, func(r pgx.Rows) error {
		var tbl, key string
		var epoch int64
		if err := r.Scan(&tbl, &key, &epoch); err != nil {
			return err
		}
		if _, ok := acquired[epoch]; !ok {
			f.add("stored rows carry a holder's epoch", "%s %s carries epoch %d, which no acquisition recorded", tbl, key, epoch)
		}
		return nil
	})
	if err != nil {
		f.add("checker", "read stored epochs: %v", err)
	}
	runs := map[int64]int64{} // epoch → run id
	err = queryRows(tx, `SELECT id, status, epoch, owner IS NOT NULL FROM check_runs ORDER BY id`, func(r pgx.Rows) error {
		var id int64
		var status string
		var epoch *int64
		var owned bool
		if err := r.Scan(&id, &status, &epoch, &owned); err != nil {
			return err
		}
		switch status {
		case "busy", "cooldown", "skipped":
			switch {
			case epoch != nil:
				f.add("refused runs write nothing", "run %d (%s) holds epoch %d", id, status, *epoch)
			case owned:
				f.add("refused runs write nothing", "run %d (%s) holds an owner", id, status)
			}
			return nil
		case "running", "completed", "completed_with_failures", "lease_lost", "connection_lost", "cancelled", "failed":
		default:
			f.add("documented statuses", "run %d ended %q", id, status)
		}
		if epoch == nil {
			f.add("refused runs write nothing", "run %d (%s) has no epoch", id, status)
			return nil
		}
		if _, ok := acquired[*epoch]; !ok {
			f.add("refused runs write nothing", "run %d (%s) has epoch %d, which no acquisition recorded", id, status, *epoch)
		}
		if other, ok := runs[*epoch]; ok {
			f.add("one holder at a time", "runs %d and %d both ran under epoch %d", other, id, *epoch)
		}
		runs[*epoch] = id
		return nil
	})
	if err != nil {
		f.add("checker", "read check_runs: %v", err)
	}
}

// checkSamples: the lease's epoch, read every 100 ms, never went down.
func checkSamples(f findings, samples []sample) {
	for i := 1; i < len(samples); i++ {
		if samples[i].epoch < samples[i-1].epoch {
			f.add("epochs only grow", "sampled epoch went from %d to %d", samples[i-1].epoch, samples[i].epoch)
		}
	}
}
