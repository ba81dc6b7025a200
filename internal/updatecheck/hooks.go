package updatecheck

import (
	"context"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// What a Checker tells the rest of the process: the metrics (Observer), the
// notifications (Notifier) and the cached reads (Reads), each set once
// before the first check or write.

// Observer hears how checks and fetches end (metrics).
type Observer interface {
	// CheckEnded: ran is false for refused checks (busy, cooldown, skipped).
	CheckEnded(trigger readmodel.Trigger, status readmodel.CheckStatus, ran bool, d time.Duration)
	// SourceFetched: ok, not_modified, failed or cancelled.
	SourceFetched(outcome string)
	// LeaseHeld: this process took or gave back the lease.
	LeaseHeld(held bool)
}

type noObserver struct{}

func (noObserver) CheckEnded(readmodel.Trigger, readmodel.CheckStatus, bool, time.Duration) {}
func (noObserver) SourceFetched(string)                                                     {}
func (noObserver) LeaseHeld(bool)                                                           {}

// Notifier queues the notifications that results call for, in the
// transaction that writes them (notify.Service).
type Notifier interface {
	Queue(ctx context.Context, tx *store.Tx, codes []string, channelID, epoch int64) (int, error)
	// QueueComponents: the results of the components keys were written
	// in tx, the local site's and registered sites' alike.
	QueueComponents(ctx context.Context, tx *store.Tx, keys []store.ComponentKey, epoch int64) error
	QueueSourceFailing(ctx context.Context, tx *store.Tx, url string, epoch int64) error
	// QueueRegistryKeysChanged: an npm registry's keys changed from
	// oldKeys, pinned in tx.
	QueueRegistryKeysChanged(ctx context.Context, tx *store.Tx, registry string, oldKeys []string, epoch int64) error
	// QueuePinDowngrade: a manifest sync lowered the trust of the source
	// at url for codes, recorded in tx (pin_downgrades).
	QueuePinDowngrade(ctx context.Context, tx *store.Tx, url string, codes []string) error
	// QueueTreeExposed: the tree's evaluation found the look-back
	// findings ids (tree_exposures), written in tx.
	QueueTreeExposed(ctx context.Context, tx *store.Tx, ids []int64, epoch int64) error
	// QueueTreeFindings: the tree's evaluation wrote new findings in tx;
	// those counted under mode are notified.
	QueueTreeFindings(ctx context.Context, tx *store.Tx, site int64, mode readmodel.DevMode, epoch int64) error
	// QueueSiteTreeFindings: the same evaluation's findings new to a site
	// (new to the fleet in tx, or on a site of moved, whose tree moved)
	// for the channels of some sites and of the fleet.
	QueueSiteTreeFindings(ctx context.Context, tx *store.Tx, moved []int64, mode readmodel.DevMode, epoch int64) error
	// QueueTreeBrings: the check wrote what the lockfile changes ids
	// (tree_brings) brought in tx; each of the local site's signals is
	// told.
	QueueTreeBrings(ctx context.Context, tx *store.Tx, ids []int64, epoch int64) error
	// QueueRunEnd runs in the check's last fenced transaction: what the run
	// queued for email channels goes out as one message per channel.
	QueueRunEnd(ctx context.Context, tx *store.Tx, epoch int64) error
}

// NotifyWith makes every result write queue its notifications through n, in
// the same transaction: the check's, and those of the Importer and the
// Syncer made from c. Call it before the first write.
func (c *Checker) NotifyWith(n Notifier) { c.notifier = n }

// Reads are this process's cached reads of the read model
// (catalog.Reads, whose package doc states the rule): every write of a
// check, an import or a sync tells them at once (Changed), and the
// scheduler tells them the schedule it runs, for the summary's next check.
type Reads interface {
	Changed()
	Scheduled(cron.Schedule)
}

type noReads struct{}

func (noReads) Changed()                {}
func (noReads) Scheduled(cron.Schedule) {}

// TellReads makes every write of c, and of the Importer and the Syncer made
// from c, tell r, and the scheduler of c tell r its schedule. Call it
// before the first write.
func (c *Checker) TellReads(r Reads) { c.reads = r }

// Observe reports checks and fetches to o (and the lease an import holds).
// Call it before the first check.
func (c *Checker) Observe(o Observer) { c.observer = o }
