package catalog

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// A write followed by invalidate is seen by every read that begins after
// it, however reads, refreshes and invalidations interleave; and no value
// handed out was read longer than readMaxAge before (plus one read's
// duration) — many goroutines, repeated, under -race.
//
// The cache tests run in a synctest bubble: time.Sleep there moves the
// bubble's clock, exactly and at once, and waits for nothing.
func TestReadCacheNeverHidesAWriteNorServesOldValues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var version atomic.Int64 // the "database": bumped by each write
		type seen struct {
			version int64
			readAt  time.Time
		}
		const readTakes = 2 * time.Millisecond
		read := func(context.Context) (seen, error) {
			v := seen{version: version.Load(), readAt: time.Now()}
			time.Sleep(readTakes)
			return v, nil
		}
		var rc readCache[seen]
		ctx := context.Background()
		deadline := time.Now().Add(3 * time.Second)
		var wg sync.WaitGroup
		for w := range 4 { // writers: write, then invalidate, then read their own write
			wg.Go(func() {
				for time.Now().Before(deadline) {
					v := version.Add(1)
					rc.invalidate()
					got, err := rc.get(ctx, read, nil)
					if err != nil {
						t.Error(err)
						return
					}
					if got.version < v {
						t.Errorf("writer %d: wrote version %d, then read %d", w, v, got.version)
						return
					}
					time.Sleep(time.Duration(w+1) * 3 * time.Millisecond)
				}
			})
		}
		for range 16 { // readers: any value, but never too old
			wg.Go(func() {
				for time.Now().Before(deadline) {
					asked := time.Now()
					got, err := rc.get(ctx, read, nil)
					if err != nil {
						t.Error(err)
						return
					}
					if age := asked.Sub(got.readAt); age > readMaxAge+readTakes {
						t.Errorf("served a value read %s before it was asked for", age)
						return
					}
					time.Sleep(100 * time.Microsecond)
				}
			})
		}
		wg.Wait()
	})
}

// While a value is only a little old, requests get it at once and one read
// refreshes it in the background: nobody waits for the database.
func TestReadCacheRefreshesInTheBackground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rc readCache[int]
		var reads atomic.Int32
		release := make(chan struct{})
		read := func(context.Context) (int, error) {
			n := int(reads.Add(1))
			if n > 1 {
				<-release // the refresh hangs until the test lets it go
			}
			return n, nil
		}
		ctx := context.Background()
		if v, err := rc.get(ctx, read, nil); err != nil || v != 1 {
			t.Fatalf("first read: %d, %v", v, err)
		}
		time.Sleep(readFresh + 50*time.Millisecond)
		for range 50 {
			v, err := rc.get(ctx, read, nil) // must not wait for the hanging refresh
			if err != nil || v != 1 {
				t.Fatalf("during the refresh: %d, %v", v, err)
			}
		}
		close(release)
		synctest.Wait() // the refresh has ended
		if v, err := rc.get(ctx, read, nil); err != nil || v != 2 {
			t.Fatalf("after the refresh: %d, %v; want the refreshed value (2)", v, err)
		}
		if n := reads.Load(); n != 2 {
			t.Fatalf("%d reads for one refresh, want 2 in all", n)
		}
	})
}

// Past its freshness a value is asked about before it is read again: kept
// while the question says it holds, read again when it does not, and never
// asked about after an invalidate (which always reads).
func TestReadCacheAsksBeforeReadingAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rc readCache[int]
		var reads, asks atomic.Int32
		var stillHolds atomic.Bool
		read := func(context.Context) (int, error) { return int(reads.Add(1)), nil }
		holds := func(context.Context, int) (bool, error) { asks.Add(1); return stillHolds.Load(), nil }
		ctx := context.Background()
		// settle waits past the freshness, then gets until the background
		// question or read has answered.
		settle := func(want int) {
			t.Helper()
			time.Sleep(readMaxAge + 10*time.Millisecond) // too old to serve: waits for the answer
			v, err := rc.get(ctx, read, holds)
			if err != nil || v != want {
				t.Fatalf("got %d, %v; want %d", v, err, want)
			}
		}
		if v, err := rc.get(ctx, read, holds); err != nil || v != 1 {
			t.Fatalf("first get: %d, %v", v, err)
		}
		stillHolds.Store(true)
		settle(1)
		settle(1)
		if reads.Load() != 1 || asks.Load() != 2 {
			t.Fatalf("while it holds: %d reads, %d questions; want 1 and 2", reads.Load(), asks.Load())
		}
		stillHolds.Store(false)
		settle(2)
		if asks.Load() != 3 {
			t.Fatalf("%d questions, want 3", asks.Load())
		}
		stillHolds.Store(true)
		rc.invalidate()
		if v, err := rc.get(ctx, read, holds); err != nil || v != 3 {
			t.Fatalf("after invalidate: %d, %v; want a new read (3)", v, err)
		}
		if asks.Load() != 3 {
			t.Fatalf("asked %d times; an invalidated value must be read, not asked about", asks.Load())
		}
	})
}

// A keyed cache keeps each key's value apart, read once while fresh, the
// last keyedMax keys asked (the least recently asked forgotten first),
// and invalidate drops every key's value.
func TestKeyedCacheKeepsEachKeyApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var kc keyedCache[string]
		reads := map[string]int{}
		var mu sync.Mutex
		get := func(key string) string {
			t.Helper()
			v, err := kc.get(context.Background(), key, func(context.Context) (string, error) {
				mu.Lock()
				defer mu.Unlock()
				reads[key]++
				return fmt.Sprintf("%s#%d", key, reads[key]), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		if a, b, a2 := get("a"), get("b"), get("a"); a != "a#1" || b != "b#1" || a2 != "a#1" {
			t.Fatalf("a %s, b %s, a again %s: each key read once while fresh", a, b, a2)
		}
		for i := range keyedMax - 1 { // b is now the least recently asked
			get("a")
			get(fmt.Sprint("k", i))
		}
		if got := get("a"); got != "a#1" {
			t.Errorf("a, asked all along: %s, want its first read", got)
		}
		if got := get("b"); got != "b#2" {
			t.Errorf("b, the least recently asked of more than keyedMax keys: %s, want read again", got)
		}
		kc.invalidate()
		if got := get("a"); got != "a#2" {
			t.Errorf("a after invalidate: %s, want read again", got)
		}
	})
}
