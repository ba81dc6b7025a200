package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/verdaccio"
	"github.com/upcheck/upcheck/internal/testing/wait"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// `components sync --lockfile` of the lockfiles the real npm and pnpm
// clients write for one site: the packages --include chooses become
// components with source npm:NAME, the lockfile's code and the locked
// version, --core's is "core", and the JSON line is the manifest sync's.
func TestComponentsSyncLockfile(t *testing.T) {
	t.Parallel()
	reg := verdaccio.Start(t)
	token := reg.AddUser(t, "publisher")
	for _, p := range []verdaccio.Package{
		{Name: "@vitnode/core", Version: "2.0.0"},
		{Name: "@vitnode/core", Version: "2.1.0"},
		{Name: "@vitnode/blog", Version: "1.4.0", PeerDependencies: map[string]string{"@vitnode/core": "^2.0.0"}},
		{Name: "tiny-helper", Version: "3.0.0"},
	} {
		reg.Publish(t, token, p)
	}
	site := verdaccio.Site{"dependencies": {"@vitnode/core": "2.0.0", "@vitnode/blog": "^1.0.0", "tiny-helper": "^3.0.0"}}
	for _, client := range []string{"npm", "pnpm"} {
		t.Run(client, func(t *testing.T) {
			lock := reg.Lock(t, client, site)
			d := pgtest.New(t)
			env := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_NPM_REGISTRY": reg.URL}
			out, code := cli(t, env, "components", "sync", "--lockfile", lock, "--include", "@vitnode/*", "--core", "@vitnode/core")
			var rep updatecheck.SyncReport
			if code != 0 || strings.Count(out, "\n") != 1 || json.Unmarshal([]byte(out), &rep) != nil ||
				rep.Components != 2 || rep.Added != 2 || rep.Removed != 0 || rep.Tree == nil || rep.Tree.Added != 3 {
				t.Fatalf("sync --lockfile %s: %q (exit %d), want one JSON line adding 2 components and a tree of 3 packages", lock, out, code)
			}
			for code, want := range map[string][2]string{
				"core":          {"2.0.0", "npm:@vitnode/core"},
				"vitnode--blog": {"1.4.0", "npm:@vitnode/blog"},
				"tiny-helper":   {"", ""},
			} {
				if v, src := installed(t, d, code); v != want[0] || src != want[1] {
					t.Errorf("%s: component %q is %q from %q, want %q from %q", client, code, v, src, want[0], want[1])
				}
			}
			// The settings say the same as the flags; without --include the
			// site's own dependencies are the components.
			env["UPCHECK_LOCKFILE"], env["UPCHECK_LOCKFILE_CORE"] = lock, "@vitnode/core"
			if out, code := cli(t, env, "components", "sync"); code != 0 || !strings.Contains(out, `"components":3,"added":1,"changed":0,"removed":0`) {
				t.Fatalf("sync of $UPCHECK_LOCKFILE: %q (exit %d)", out, code)
			}
			if v, src := installed(t, d, "tiny-helper"); v != "3.0.0" || src != "npm:tiny-helper" {
				t.Errorf("tiny-helper: %q from %q", v, src)
			}
		})
	}
}

// serve with UPCHECK_LOCKFILE follows the site: the lockfile's packages
// are the components from the start (a private one read with the .npmrc's
// token), and a plugin upgraded outside upcheck (the lockfile edited) is
// installed at its new version in the store without any sync command and
// re-evaluated at once from the stored document, never shown as still
// outdated. The token is in none of the log lines of serve, of the sync
// or of a check, even at DEBUG.
func TestServeFollowsTheLockfile(t *testing.T) {
	t.Parallel()
	reg := verdaccio.Start(t)
	publisher := reg.AddUser(t, "publisher")
	reg.Publish(t, publisher, verdaccio.Package{Name: "@private/core", Version: "4.0.0"})
	reg.Publish(t, publisher, verdaccio.Package{Name: "@private/blog", Version: "1.0.0"})
	reg.Publish(t, publisher, verdaccio.Package{Name: "@private/blog", Version: "1.1.0"})
	siteToken := reg.AddUser(t, "site")
	npmrc := reg.Npmrc(t, siteToken)
	d := pgtest.New(t)
	lock := filepath.Join(t.TempDir(), "package-lock.json")
	writeLock := func(version string) {
		t.Helper()
		body := `{
  "name": "site",
  "version": "1.0.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {"name": "site", "version": "1.0.0", "dependencies": {"@private/blog": "^1.0.0", "@private/core": "^4.0.0"}},
    "node_modules/@private/blog": {"version": "` + version + `", "license": "MIT"},
    "node_modules/@private/core": {"version": "4.0.0", "license": "MIT"}
  }
}
`
		if err := os.WriteFile(lock, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeLock("1.0.0")
	env := map[string]string{
		"UPCHECK_DATABASE_URL":          d.URL,
		"UPCHECK_LISTEN":                "127.0.0.1:0",
		"UPCHECK_NPMRC":                 npmrc,
		"UPCHECK_LOCKFILE":              lock,
		"UPCHECK_LOCKFILE_CORE":         "@private/core",
		"UPCHECK_ALLOW_PRIVATE_SOURCES": "1",
		"UPCHECK_LOG_LEVEL":             "DEBUG",
		"UPCHECK_TEST_TIMINGS":          "lockfile=50ms",
	}
	logs := serveCLI(t, env)
	type state struct {
		version   string
		evaluated bool
		update    bool
	}
	blog := func() (state, error) {
		var s state
		err := d.Pool.QueryRow(context.Background(),
			"SELECT installed_version, evaluated, update_available FROM component_state WHERE code = 'private--blog'").Scan(&s.version, &s.evaluated, &s.update)
		return s, err
	}
	// The catch-up check at start reads the private package with the
	// token and finds 1.1.0.
	wait.For(t, "blog 1.0.0 evaluated with an update", wait.Guard, func() (bool, error) {
		s, err := blog()
		if err != nil {
			return false, wait.Notf("%v", err)
		}
		return s == state{"1.0.0", true, true}, wait.Notf("%+v", s)
	})
	if v, src := installed(t, d, "private--blog"); v != "1.0.0" || src != "npm:@private/blog" {
		t.Fatalf("blog: %q from %q", v, src)
	}

	writeLock("1.1.0") // npm install @private/blog@1.1.0, outside upcheck
	wait.For(t, "blog 1.1.0 installed and up to date", wait.Guard, func() (bool, error) {
		s, err := blog()
		if err != nil {
			return false, wait.Notf("%v", err)
		}
		return s == state{"1.1.0", true, false}, wait.Notf("%+v", s)
	})

	_, syncLog, code := cliStderr(t, env, "components", "sync", "--lockfile", lock)
	if code != 0 {
		t.Fatalf("sync: exit %d\n%s", code, syncLog)
	}
	// The tree's evaluation after serve applied the lockfile holds the
	// lease as an import does: a check meanwhile is refused as busy
	// (exit 3), and runs once it is done.
	var checkLog string
	wait.For(t, "a check ran", wait.Guard, func() (bool, error) {
		var code int
		_, checkLog, code = cliStderr(t, env, "check")
		if code != 0 && code != 3 {
			t.Fatalf("check: exit %d\n%s", code, checkLog)
		}
		return code == 0, wait.Notf("check: exit %d", code)
	})
	for what, text := range map[string]string{"serve": logs.String(), "sync": syncLog, "check": checkLog} {
		if text == "" {
			t.Errorf("%s logged nothing at DEBUG", what)
		}
		if strings.Contains(text, siteToken) {
			t.Errorf("%s's log holds the token:\n%s", what, text)
		}
	}
}

// Every check serve runs reads the lockfile first, whoever asks for it: a
// check asked for through the API right after an upgrade outside upcheck
// sees the new version, although the watcher would not look for an hour.
func TestServeReadsTheLockfileBeforeEachCheck(t *testing.T) {
	t.Parallel()
	reg := verdaccio.Start(t)
	publisher := reg.AddUser(t, "publisher")
	for _, p := range []verdaccio.Package{
		{Name: "@acme/core", Version: "4.0.0"},
		{Name: "@acme/blog", Version: "1.0.0"},
		{Name: "@acme/blog", Version: "1.1.0"},
	} {
		reg.Publish(t, publisher, p)
	}
	d := pgtest.New(t)
	lock := filepath.Join(t.TempDir(), "package-lock.json")
	writeLock := func(version string) {
		t.Helper()
		body := `{"lockfileVersion": 3, "packages": {
  "": {"dependencies": {"@acme/blog": "^1.0.0", "@acme/core": "^4.0.0"}},
  "node_modules/@acme/blog": {"version": "` + version + `"},
  "node_modules/@acme/core": {"version": "4.0.0"}
}}
`
		if err := os.WriteFile(lock, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeLock("1.0.0")
	env := map[string]string{
		"UPCHECK_DATABASE_URL":          d.URL,
		"UPCHECK_LISTEN":                "127.0.0.1:0",
		"UPCHECK_NPM_REGISTRY":          reg.URL,
		"UPCHECK_LOCKFILE":              lock,
		"UPCHECK_LOCKFILE_CORE":         "@acme/core",
		"UPCHECK_ALLOW_PRIVATE_SOURCES": "1",
		"UPCHECK_TEST_TIMINGS":          "lockfile=1h,cooldown=0s",
	}
	admin := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "STDIN": "a long enough passphrase\n"}
	if _, code := cli(t, admin, "user", "add", "--email", "ops@example.test", "--role", "admin"); code != 0 {
		t.Fatal("user add failed")
	}
	out, code := cli(t, admin, "token", "create", "--email", "ops@example.test")
	if code != 0 {
		t.Fatal("token create failed")
	}
	apiToken := strings.TrimSpace(out)

	logs := serveCLI(t, env)
	var base string
	wait.True(t, "serve to listen", wait.Guard, func() bool {
		_, rest, ok := strings.Cut(logs.String(), "msg=serving addr=")
		base, _, _ = strings.Cut(rest, " ")
		return ok
	})
	blog := func() string {
		var version string
		var evaluated bool
		err := d.Pool.QueryRow(context.Background(), "SELECT installed_version, evaluated FROM component_state WHERE code = 'acme--blog'").Scan(&version, &evaluated)
		if err != nil || !evaluated {
			return ""
		}
		return version
	}
	wait.True(t, "the catch-up check to evaluate blog 1.0.0", wait.Guard, func() bool { return blog() == "1.0.0" })

	writeLock("1.1.0")
	var status int
	wait.For(t, "a manual check through the API", wait.Guard, func() (bool, error) {
		req, _ := http.NewRequest(http.MethodPost, base+"/api/admin/plugins/updates/check", nil)
		req.Header.Set("Authorization", "Bearer "+apiToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		status = resp.StatusCode
		return status != http.StatusConflict, wait.Notf("%d (the catch-up check still holds the lease)", status) // busy: ask again
	})
	if status != http.StatusOK {
		t.Fatalf("manual check: %d\n%s", status, logs)
	}
	if v := blog(); v != "1.1.0" {
		t.Fatalf("blog after the manual check: %q, want 1.1.0 as the lockfile says now", v)
	}
}
