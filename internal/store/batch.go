package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/upcheck/upcheck/internal/db"
)

// ErrEventsToQueue means a pipelined write found notification events to
// queue (EventPlanNothingNew): nothing of the batch was written, and the
// caller writes it again in a transaction that queues them.
var ErrEventsToQueue = errors.New("notification events to queue")

// Batch is writes sent together: one round trip, one implicit transaction
// (PostgreSQL runs the statements of one pipelined batch, up to its Sync,
// as one transaction). The first statement that fails aborts that
// transaction: no statement after it runs and nothing of the batch commits.
// A fenced batch (Fence) starts with the lease's fence, which raises when
// the lease is not held, so a write behind it commits only under the lease.
// Results are delivered into the pointers given when the batch is sent.
type Batch struct {
	fence *pgx.QueuedQuery
	queue []*pgx.QueuedQuery
	err   error // a statement that could not be queued: the batch is not sent
}

// Fence puts the lease's fence (upcheck_lease_fence: timeouts, advisory lock,
// row lock, ownership check) before every other statement of the batch.
func (b *Batch) Fence(key int64, name string, owner uuid.UUID, lockTimeout, statementTimeout, idleTimeout time.Duration) {
	b.fence = recordOne(func(r *recorder) { // the epoch is not needed: the fence raises when not held
		_, _ = db.New().LeaseBeginFence(context.Background(), r, db.LeaseBeginFenceParams{
			Key: key, Name: name, Owner: owner,
			LockTimeout: pgDuration(lockTimeout), StatementTimeout: pgDuration(statementTimeout), IdleTimeout: pgDuration(idleTimeout),
		})
	})
}

// SourceSaveDocument is Tx.SourceSaveDocument in the batch; using gets how
// many components use the source.
func (b *Batch) SourceSaveDocument(d SourceDocument, using *int) {
	q := recordOne(func(r *recorder) {
		_, _ = db.New().SourceSaveDocument(context.Background(), r, saveDocumentParams(d))
	})
	q.QueryRow(scanInt(using))
	b.add(q)
	b.add(recordOne(func(r *recorder) {
		_ = db.New().SourceSequenceRecord(context.Background(), r, db.SourceSequenceRecordParams{Url: d.URL, Key: d.SequenceKey, Sequence: d.Sequence, Epoch: d.Epoch})
	}))
}

// SourceSaveUnchanged is Tx.SourceSaveUnchanged in the batch.
func (b *Batch) SourceSaveUnchanged(u Unchanged, using *int) {
	q := recordOne(func(r *recorder) {
		_, _ = db.New().SourceSaveUnchanged(context.Background(), r, u.params())
	})
	q.QueryRow(scanInt(using))
	b.add(q)
}

// ResultWrite is Tx.ResultWrite in the batch, one statement: written gets
// the codes written, in the order given; a result whose inputs moved is
// left out. Results that cannot be encoded (a code given twice) make the
// batch fail before it is sent.
func (b *Batch) ResultWrite(results []Result, written *[]ComponentKey) {
	rows, err := resultRows(results)
	if err != nil {
		b.err = errors.Join(b.err, err)
		return
	}
	q := recordOne(func(r *recorder) {
		_, _ = db.New().ResultWrite(context.Background(), r, rows)
	})
	q.Query(func(rs pgx.Rows) error {
		keys, err := pgx.CollectRows(rs, pgx.RowToStructByPos[db.ResultWriteRow])
		if err != nil {
			return err
		}
		*written = WrittenOf(results, writtenKeys(keys))
		return nil
	})
	b.add(q)
}

// EventPlanNothingNew asks, in the batch, whether the current state of
// codes calls for any notification event an enabled channel does not have
// yet; if so the batch fails with ErrEventsToQueue and nothing commits.
func (b *Batch) EventPlanNothingNew(codes []string) {
	b.add(recordOne(func(r *recorder) {
		_ = db.New().EventPlanNothingNew(context.Background(), r, orNoStrings(codes))
	}))
}

// EventPlanSitesNothingNew asks, in the batch, whether registered sites'
// components keys (LocalSite's are left out) may call for a notification
// event of a channel of some sites or of the fleet; if so the batch fails
// with ErrEventsToQueue and nothing commits (the writer then plans in a
// transaction, EventPlanSites).
func (b *Batch) EventPlanSitesNothingNew(keys []ComponentKey) {
	sites, codes := RegisteredOf(keys)
	if len(sites) == 0 {
		return
	}
	b.add(recordOne(func(r *recorder) {
		_ = db.New().EventPlanSitesNothingNew(context.Background(), r, db.EventPlanSitesNothingNewParams{Sites: sites, Codes: codes})
	}))
}

func (b *Batch) add(q *pgx.QueuedQuery) { b.queue = append(b.queue, q) }

// SendBatch sends b and waits for every answer. The first error aborts the
// batch's transaction; it is returned mapped (ErrLeaseNotHeld when the
// fence refused, ErrEventsToQueue, ErrStatementTimeout, ...).
func (s *Store) SendBatch(ctx context.Context, b *Batch) error {
	if b.err != nil {
		return b.err
	}
	pb := &pgx.Batch{}
	if b.fence != nil {
		pb.QueuedQueries = append(pb.QueuedQueries, b.fence)
	}
	pb.QueuedQueries = append(pb.QueuedQueries, b.queue...)
	if len(pb.QueuedQueries) == 0 {
		return nil
	}
	return mapError(s.pool.SendBatch(ctx, pb).Close())
}

func scanInt(into *int) func(pgx.Row) error {
	return func(row pgx.Row) error {
		var n int64
		if err := row.Scan(&n); err != nil {
			return err
		}
		if into != nil {
			*into = int(n)
		}
		return nil
	}
}

// recorder is a db.DBTX that runs nothing: it records the statement and its
// arguments, in the order sqlc's generated code passes them, so that a
// batch sends exactly the statements of queries/*.sql.
type recorder struct {
	batch pgx.Batch
}

func (r *recorder) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	r.batch.Queue(sql, args...)
	return pgconn.CommandTag{}, nil
}

func (r *recorder) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	r.batch.Queue(sql, args...)
	return nil, errRecorded
}

func (r *recorder) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	r.batch.Queue(sql, args...)
	return recordedRow{}
}

// CopyFrom cannot be batched: a COPY is a protocol of its own.
func (r *recorder) CopyFrom(context.Context, pgx.Identifier, []string, pgx.CopyFromSource) (int64, error) {
	return 0, errRecorded
}

func (r *recorder) SendBatch(_ context.Context, b *pgx.Batch) pgx.BatchResults {
	r.batch.QueuedQueries = append(r.batch.QueuedQueries, b.QueuedQueries...)
	return nil
}

var errRecorded = errors.New("recorded, not run")

type recordedRow struct{}

func (recordedRow) Scan(...any) error { return errRecorded }

// recordOne records the one statement fn sends.
func recordOne(fn func(r *recorder)) *pgx.QueuedQuery {
	r := &recorder{}
	fn(r)
	if len(r.batch.QueuedQueries) != 1 {
		panic(fmt.Sprintf("store: a recorded query sent %d statements", len(r.batch.QueuedQueries)))
	}
	return r.batch.QueuedQueries[0]
}
