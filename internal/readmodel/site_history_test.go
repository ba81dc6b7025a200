package readmodel_test

import (
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// A push's change in words: unchanged, the packages' counts (the noun
// once, on the first), the versions', or a new file of the same packages.
func TestSitePushChangeText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p    readmodel.TreeChange
		want string
	}{
		{readmodel.TreeChange{Unchanged: true, Added: 3}, readmodel.SitePushUnchangedText},
		{readmodel.TreeChange{Added: 2, Changed: 1, Removed: 3, Installed: 3, Uninstalled: 1},
			"2 packages added, 1 changed, 3 removed; 3 versions installed, 1 version no longer installed"},
		{readmodel.TreeChange{Changed: 1, Installed: 1, Uninstalled: 1}, "1 package changed; 1 version installed, 1 version no longer installed"},
		{readmodel.TreeChange{Uninstalled: 2}, "2 versions no longer installed"},
		{readmodel.TreeChange{}, "a new file, the same packages"},
	} {
		if got := readmodel.SitePushChangeText(c.p); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
}

// A refused push in words: when, the file, why (one final stop), since
// when only when it has stood longer than this refusal.
func TestSitePushRefusedText(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	r := readmodel.InputRefusal{Input: readmodel.InputLockfile, Path: "pnpm-lock.yaml", Error: "invalid lockfile: line 3: bad key.",
		Since: now.Add(-5 * time.Minute), RefusedAt: now.Add(-5 * time.Minute)}
	want := "The last push was refused 5 minutes ago (pnpm-lock.yaml): invalid lockfile: line 3: bad key. The site’s packages are those of the last push accepted."
	if got := readmodel.SitePushRefusedText(now, r); got != want {
		t.Errorf("%q, want %q", got, want)
	}
	r.Since = now.Add(-3 * 24 * time.Hour)
	if got := readmodel.SitePushRefusedText(now, r); got != "The last push was refused 5 minutes ago (pnpm-lock.yaml): invalid lockfile: line 3: bad key. Pushes have been refused for this reason since 2026-12-03 12:00 UTC. The site’s packages are those of the last push accepted." {
		t.Errorf("standing: %q", got)
	}
}
