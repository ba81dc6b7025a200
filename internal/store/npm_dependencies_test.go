package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

// dependencies are n rows as a check writes them: a validator, a first
// publish time, and a young package's few versions' times.
func dependencies(n int, registry string) []store.NpmDependency {
	first := time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC)
	out := make([]store.NpmDependency, n)
	for i := range out {
		published := map[string]time.Time{}
		for v := range 10 {
			published[fmt.Sprintf("1.0.%d", v)] = first.Add(time.Duration(v) * time.Hour)
		}
		out[i] = store.NpmDependency{Registry: registry, Name: fmt.Sprintf("dep-%03d", i), ETag: fmt.Sprintf(`W/"%d"`, i),
			FirstPublished: &first, Latest: "1.0.9", Published: published}
	}
	return out
}

// What a check read of dependencies' documents reads back as written,
// per registry; a write of an older epoch leaves a newer one's row.
func TestNpmDependenciesAreKeptByEpoch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	const reg = "http://127.0.0.1:1/"
	rows := dependencies(3, reg)
	rows[2].FirstPublished, rows[2].Published = nil, map[string]time.Time{}
	save := func(deps []store.NpmDependency, epoch int64) {
		t.Helper()
		if err := b.st.WithTx(ctx, func(tx *store.Tx) error { return tx.NpmDependencySave(ctx, deps, epoch) }); err != nil {
			t.Fatal(err)
		}
	}
	save(rows, 2)
	got, err := b.st.NpmDependencies(ctx, reg, []string{"dep-000", "dep-002", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["dep-000"].ETag != `W/"0"` || len(got["dep-000"].Published) != 10 || !got["dep-000"].FirstPublished.Equal(*rows[0].FirstPublished) ||
		got["dep-002"].FirstPublished != nil {
		t.Fatalf("read back %+v", got)
	}
	if other, err := b.st.NpmDependencies(ctx, "http://127.0.0.1:2/", []string{"dep-000"}); err != nil || len(other) != 0 {
		t.Errorf("another registry's: %v %v", other, err)
	}
	old := dependencies(1, reg)
	old[0].ETag = "stale"
	save(old, 1)
	if got, _ := b.st.NpmDependencies(ctx, reg, []string{"dep-000"}); got["dep-000"].ETag != `W/"0"` {
		t.Errorf("an older epoch's write replaced the row: %+v", got["dep-000"])
	}
}

// The cost of the statement a check adds to a source's fenced write when
// it read dependencies' documents: the check's bound's 200 rows in one
// statement (go test -run '^$' -bench NpmDependencySave ./internal/store/).
func BenchmarkNpmDependencySave(b *testing.B) {
	d := pgtest.New(b)
	st := store.New(d.Pool)
	ctx := context.Background()
	for _, n := range []int{1, 25, 200} {
		rows := dependencies(n, "http://127.0.0.1:1/")
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := range b.N {
				if err := st.WithTx(ctx, func(tx *store.Tx) error { return tx.NpmDependencySave(ctx, rows, int64(i+1)) }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
