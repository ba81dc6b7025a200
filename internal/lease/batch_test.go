package lease

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/testkit"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// logWrites makes every write of a source row log, in the writing
// transaction (so the log commits only with the write), the epoch stored on
// the row and the epoch of the lease as that transaction sees it.
func (b *bundle) logWrites(t *testing.T, urls ...string) {
	t.Helper()
	b.exec(t, `CREATE TABLE fence_log (url text, write_epoch bigint, lease_epoch bigint)`)
	b.exec(t, `CREATE FUNCTION fence_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fence_log SELECT NEW.url, NEW.epoch, epoch FROM core_update_lock WHERE name = 'check';
    RETURN NEW;
END $$`)
	b.exec(t, `CREATE TRIGGER fence_log AFTER INSERT OR UPDATE ON sources FOR EACH ROW EXECUTE FUNCTION fence_log()`)
	for _, u := range urls {
		b.exec(t, "INSERT INTO sources (url, epoch) VALUES ($1, 0)", u)
	}
	b.exec(t, "DELETE FROM fence_log")
}

// sendMark is a fenced batch that stamps the source at url with epoch.
func sendMark(ctx context.Context, m *Manager, l Lease, url string) error {
	var b store.Batch
	b.SourceSaveUnchanged(store.Unchanged{URL: url, Epoch: l.Epoch}, nil)
	return m.SendFenced(ctx, l.Owner, &b)
}

// A fenced batch from an owner whose lease was taken over is refused with
// ErrLeaseLost and writes nothing; the holder's commits.
func TestFencedBatchAfterTakeover(t *testing.T) {
	t.Parallel()
	b := setup(t, Timings(testkit.Timings()))
	ctx := context.Background()
	const url = "https://a.example/updates.json"
	b.logWrites(t, url)
	old := mustAcquire(t, b.m, Operator)
	if err := sendMark(ctx, b.m, old, url); err != nil {
		t.Fatal(err)
	}
	b.expire(t)
	other := b.manager(t)
	cur := mustAcquire(t, other, Operator)
	if err := sendMark(ctx, b.m, old, url); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("fenced batch after takeover: got %v, want ErrLeaseLost", err)
	}
	if err := sendMark(ctx, other, cur, url); err != nil {
		t.Fatal(err)
	}
	var epochs []int64
	rows, err := b.db.Pool.Query(ctx, "SELECT write_epoch FROM fence_log ORDER BY write_epoch")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var e int64
		if err := rows.Scan(&e); err != nil {
			t.Fatal(err)
		}
		epochs = append(epochs, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(epochs) != fmt.Sprint([]int64{old.Epoch, cur.Epoch}) {
		t.Fatalf("writes committed with epochs %v, want %d then %d", epochs, old.Epoch, cur.Epoch)
	}
}

// The race: eight writers send fenced batches as fast as they can, each
// under the newest lease it knows of or an older one, while the lease
// changes hands among three instances (released and taken, or expired and
// taken over). Every write that committed must carry the epoch of the
// lease as it stood when it committed, and exactly the writes that were
// answered nil committed.
func TestFencedBatchRaceNoWriteFromANonHolder(t *testing.T) {
	t.Parallel()
	b := setup(t, Timings(testkit.Timings()))
	ctx := context.Background()
	const writers = 8
	urls := make([]string, writers)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://w%d.example/updates.json", i)
	}
	b.logWrites(t, urls...)
	managers := []*Manager{b.m, b.manager(t), b.manager(t)}

	var mu sync.Mutex
	leases := []Lease{mustAcquire(t, b.m, Operator)}
	holder := []*Manager{b.m}
	pick := func(r *rand.Rand) (Lease, *Manager) {
		mu.Lock()
		defer mu.Unlock()
		i := len(leases) - 1
		if r.IntN(3) == 0 {
			i = r.IntN(len(leases))
		}
		return leases[i], holder[i]
	}

	var committed, lost, stale atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				l, m := pick(r)
				// Half the time the write goes through another instance's
				// manager: the fence is the database's, not the process's.
				if r.IntN(2) == 0 {
					m = managers[r.IntN(len(managers))]
				}
				switch err := sendMark(ctx, m, l, urls[w]); {
				case err == nil:
					committed.Add(1)
				case errors.Is(err, ErrLeaseLost):
					lost.Add(1)
				case errors.Is(err, store.ErrLockTimeout):
					stale.Add(1) // waited too long behind the others: nothing written either
				default:
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		}()
	}
	r := rand.New(rand.NewPCG(99, 2))
	for round := range 60 {
		// Between turns of the lease the writers answer a random number
		// of writes (0 to 3): the turns fall between and among them.
		target := committed.Load() + lost.Load() + stale.Load() + int64(r.IntN(4))
		wait.True(t, fmt.Sprintf("round %d: the writers answer %d writes", round, target), guard, func() bool {
			return committed.Load()+lost.Load()+stale.Load() >= target
		})
		mu.Lock()
		cur := leases[len(leases)-1]
		curM := holder[len(holder)-1]
		mu.Unlock()
		if round%2 == 0 {
			if _, err := curM.Release(ctx, cur.Owner, false); err != nil {
				t.Fatal(err)
			}
		} else {
			b.expire(t)
		}
		next := managers[r.IntN(len(managers))]
		l := mustAcquire(t, next, Operator)
		mu.Lock()
		leases, holder = append(leases, l), append(holder, next)
		mu.Unlock()
	}
	close(stop)
	wg.Wait()

	var logged, foreign int64
	b.db.QueryRow(t, "SELECT count(*), count(*) FILTER (WHERE write_epoch <> lease_epoch) FROM fence_log").Scan(&logged, &foreign)
	t.Logf("%d writes committed, %d refused as lost, %d lock timeouts", committed.Load(), lost.Load(), stale.Load())
	if foreign != 0 {
		t.Fatalf("%d of %d committed writes carry an epoch that did not hold the lease when they committed", foreign, logged)
	}
	if logged != committed.Load() {
		t.Fatalf("%d writes committed, %d were answered nil", logged, committed.Load())
	}
	if committed.Load() == 0 || lost.Load() == 0 {
		t.Fatalf("the race did not race: %d committed, %d refused", committed.Load(), lost.Load())
	}
}

// A statement timeout inside a fenced batch is reported as what it is, not
// as a lost lease, and nothing of the batch commits.
func TestFencedBatchStatementTimeoutIsNotLeaseLost(t *testing.T) {
	t.Parallel()
	timings := Timings(testkit.Timings())
	timings.TxTimeout = 300 * time.Millisecond
	b := setup(t, timings)
	ctx := context.Background()
	const url = "https://slow.example/updates.json"
	b.logWrites(t, url)
	b.exec(t, `CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(2); RETURN NEW; END $$`)
	b.exec(t, `CREATE TRIGGER slow BEFORE UPDATE ON sources FOR EACH ROW EXECUTE FUNCTION slow()`)
	l := mustAcquire(t, b.m, Operator)
	err := sendMark(ctx, b.m, l, url)
	if !errors.Is(err, store.ErrStatementTimeout) || errors.Is(err, ErrLeaseLost) {
		t.Fatalf("got %v, want a statement timeout that is not ErrLeaseLost", err)
	}
	var n int
	b.db.QueryRow(t, "SELECT count(*) FROM fence_log").Scan(&n)
	if n != 0 {
		t.Fatalf("%d writes committed from a batch that timed out", n)
	}
}
