package npme2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/testing/verdaccio"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// lockSite is the site of the lockfile scenarios: a core and two plugins
// its own dependencies, a tool among its devDependencies.
var lockSite = verdaccio.Site{
	"dependencies":    {"@e2e/lock-core": "1.0.0", "e2e-lock-a": "1.0.0", "@e2e/lock-b": "^1.0.0"},
	"devDependencies": {"e2e-lock-tool": "1.0.0"},
}

// publishLockPackages publishes what lockSite installs, and a newer a
// (the serve scenario has packages of its own: a version is published once).
func publishLockPackages(t *testing.T, reg *verdaccio.Registry, token string) {
	t.Helper()
	publish(t, reg, token, "@e2e/lock-core", "1.0.0")
	publish(t, reg, token, "e2e-lock-a", "1.0.0", "1.1.0")
	publish(t, reg, token, "@e2e/lock-b", "1.0.0")
	publish(t, reg, token, "e2e-lock-tool", "1.0.0")
}

// components lists the installed components as "code version source".
func (s *site) components() []string {
	s.t.Helper()
	rows, err := s.db.Pool.Query(context.Background(),
		"SELECT code || ' ' || installed_version || ' ' || coalesce(source_url, '-') FROM components ORDER BY code")
	if err != nil {
		s.t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// runs are the statuses of the check runs, oldest first.
func (s *site) runs() []string {
	s.t.Helper()
	rows, err := s.db.Pool.Query(context.Background(), "SELECT status FROM check_runs ORDER BY id")
	if err != nil {
		s.t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// 8a: `components sync --lockfile` reads what the real npm and pnpm wrote:
// the site's own dependencies (not its devDependencies) become components
// with npm sources, codes by lockfile.Code's rule and the locked versions;
// --include and --core choose others.
func lockfileSync(t *testing.T, reg *verdaccio.Registry, token string) {
	publishLockPackages(t, reg, token)
	want := []string{"core 1.0.0 npm:@e2e/lock-core", "e2e--lock-b 1.0.0 npm:@e2e/lock-b", "e2e-lock-a 1.0.0 npm:e2e-lock-a"}
	for _, client := range []string{"npm", "pnpm"} {
		lock := reg.Lock(t, client, lockSite)
		s := newSite(t, map[string]string{"UPCHECK_NPM_REGISTRY": reg.URL})
		if out, code := s.run("components", "sync", "--lockfile", lock, "--core", "@e2e/lock-core"); code != 0 || !strings.Contains(out, `"added":3`) {
			t.Fatalf("%s: components sync --lockfile %s: exit %d: %s", client, filepath.Base(lock), code, out)
		}
		if got := s.components(); strings.Join(got, "; ") != strings.Join(want, "; ") {
			t.Fatalf("%s: components = %q, want %q", client, got, want)
		}
		out, code := s.run("components", "sync", "--lockfile", lock, "--include", "@e2e/lock-b", "--include", "e2e-lock-*", "--core", "@e2e/lock-core")
		if code != 0 {
			t.Fatalf("%s: components sync --include --core: exit %d: %s", client, code, out)
		}
		if got, want := strings.Join(s.components(), "; "), "core 1.0.0 npm:@e2e/lock-core; e2e--lock-b 1.0.0 npm:@e2e/lock-b; e2e-lock-a 1.0.0 npm:e2e-lock-a; e2e-lock-tool 1.0.0 npm:e2e-lock-tool"; got != want {
			t.Fatalf("%s: components with --include and --core = %q, want %q", client, got, want)
		}
	}
}

// 8b: serve with UPCHECK_LOCKFILE: a plugin upgraded on the site with npm
// is picked up by serve's watcher and re-evaluated from the stored
// document, without a check: it is no longer shown as outdated.
func outOfBandUpgrade(t *testing.T, reg *verdaccio.Registry, token string) {
	publish(t, reg, token, "@e2e/watch-core", "1.0.0")
	publish(t, reg, token, "e2e-watch-a", "1.0.0", "1.1.0")
	lock := reg.Lock(t, "npm", verdaccio.Site{"dependencies": {"@e2e/watch-core": "1.0.0", "e2e-watch-a": "1.0.0"}})
	s := newSite(t, map[string]string{"UPCHECK_NPM_REGISTRY": reg.URL, "UPCHECK_LOCKFILE": lock, "UPCHECK_LOCKFILE_CORE": "@e2e/watch-core",
		"UPCHECK_TEST_TIMINGS": timings + ",lockfile=200ms"}) // serve looks at the lockfile five times a second
	s.start("serve")
	// serve reads the lockfile at start, then runs its catch-up check (no
	// check has completed yet), which finds the update.
	wait.For(t, "serve's first check to find the update", serveWait, func() (bool, error) {
		got := s.components()
		if strings.Join(got, "; ") != "core 1.0.0 npm:@e2e/watch-core; e2e-watch-a 1.0.0 npm:e2e-watch-a" {
			return false, wait.Notf("components %q", got)
		}
		if runs := s.runs(); len(runs) != 1 || runs[0] != "completed" {
			return false, wait.Notf("check runs %q", runs)
		}
		r, _ := s.lookRow("e2e-watch-a")
		if !r.Evaluated || r.UpdateVersion != "1.1.0" {
			return false, wait.Notf("e2e-watch-a = %s", rowJSON(r))
		}
		return true, nil
	})
	runs := s.runs()

	// The site's operator upgrades the plugin with npm: the lockfile changes.
	before, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	rc := reg.Npmrc(t, "")
	npm := exec.Command("npm", "install", "e2e-watch-a@1.1.0", "--save-exact", "--package-lock-only", "--ignore-scripts",
		"--userconfig", rc, "--registry", reg.URL, "--cache", filepath.Join(t.TempDir(), "npm-cache"),
		"--no-audit", "--no-fund", "--no-update-notifier", "--loglevel", "error")
	npm.Dir = filepath.Dir(lock)
	npm.Env = append(os.Environ(), "npm_config_globalconfig="+filepath.Join(t.TempDir(), "no-global-npmrc"))
	if out, err := npm.CombinedOutput(); err != nil {
		t.Fatalf("npm install e2e-watch-a@1.1.0: %v\n%s", err, out)
	}
	after, err := os.ReadFile(lock)
	if err != nil || string(after) == string(before) || !strings.Contains(string(after), `"version": "1.1.0"`) {
		t.Fatalf("npm did not change the lockfile to 1.1.0 (%v):\n%s", err, after)
	}

	wait.For(t, "serve to pick up the upgrade", serveWait, func() (bool, error) {
		r, ok := s.lookRow("e2e-watch-a")
		if !ok || r.Installed != "1.1.0" || !r.Evaluated {
			return false, wait.Notf("e2e-watch-a = %s", rowJSON(r))
		}
		return true, nil
	})
	if r := s.row("e2e-watch-a"); r.UpdateAvailable || r.UpdateVersion != "" || r.Latest != "1.1.0" {
		t.Fatalf("e2e-watch-a after the upgrade = %s; want up to date, evaluated from the stored document", rowJSON(r))
	}
	if after := s.runs(); len(after) != len(runs) {
		t.Fatalf("check runs %q after the upgrade, %q before: the re-evaluation is the sync's, not a check's", after, runs)
	}
}
