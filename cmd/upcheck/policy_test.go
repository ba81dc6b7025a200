package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

// A lockfile's components take the site-wide policy of --policy, or of
// UPCHECK_LOCKFILE_POLICY when the flag is absent (the flag replaces it);
// the policy is stored on every component in its canonical form. A policy
// that cannot be read, or one beside a manifest (which says its own), is a
// usage mistake that changes nothing.
func TestComponentsSyncLockfilePolicy(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	dir := t.TempDir()
	lock := filepath.Join(dir, "package-lock.json")
	if err := os.WriteFile(lock, []byte(`{"lockfileVersion": 3, "packages": {"": {"dependencies": {"@acme/core": "^1.0.0", "@acme/blog": "^2.0.0"}},
		"node_modules/@acme/core": {"version": "1.0.0"}, "node_modules/@acme/blog": {"version": "2.3.0"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	manifestPath := filepath.Join(dir, "manifest.json")
	if err := os.WriteFile(manifestPath, []byte(`{"components": [{"code": "core", "name": "Core", "version": "1.0.0"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	policies := func() map[string]string {
		t.Helper()
		rows, err := d.Pool.Query(context.Background(), "SELECT code, coalesce(policy, '') FROM components")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]string{}
		for rows.Next() {
			var code, policy string
			if err := rows.Scan(&code, &policy); err != nil {
				t.Fatal(err)
			}
			out[code] = policy
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	env := func(policy string) map[string]string {
		e := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_LOCKFILE_CORE": "@acme/core",
			"UPCHECK_NPM_REGISTRY": "https://npm.example.org/"}
		if policy != "" {
			e["UPCHECK_LOCKFILE"], e["UPCHECK_LOCKFILE_POLICY"] = lock, policy
		}
		return e
	}
	sync := func(e map[string]string, args ...string) {
		t.Helper()
		if _, stderr, code := cliStderr(t, e, append([]string{"components", "sync", "--lockfile", lock}, args...)...); code != 0 {
			t.Fatalf("sync %v: exit %d\n%s", args, code, stderr)
		}
	}

	sync(env(""), "--policy", ` {"soak": "3d", "offer": "patch"} `)
	const patch = `{"offer":"patch","soak":"3d"}`
	if got := policies(); len(got) != 2 || got["core"] != patch || got["acme--blog"] != patch {
		t.Fatalf("policies after --policy: %v, want %s on both components", got, patch)
	}
	sync(env(`{"offer": "security"}`))
	for code, p := range policies() {
		if p != `{"offer":"security"}` {
			t.Errorf("%s: policy %q after UPCHECK_LOCKFILE_POLICY, want the variable's", code, p)
		}
	}
	sync(env(`{"offer": "security"}`), "--policy", `{"hold": "<2.0.0"}`)
	for code, p := range policies() {
		if p != `{"hold":"<2.0.0"}` {
			t.Errorf("%s: policy %q, want --policy's: the flag replaces the variable", code, p)
		}
	}
	// No policy at all: every component offers every update (NULL).
	sync(env(""))
	for code, p := range policies() {
		if p != "" {
			t.Errorf("%s: policy %q with none given, want none", code, p)
		}
	}

	sync(env(""), "--policy", `{"offer": "minor"}`)
	before := policies()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--lockfile", lock, "--policy", `{"offer": "major"}`}, `--policy: `},
		{[]string{"--lockfile", lock, "--policy", `{"soak": "2w"}`}, `--policy: `},
		{[]string{"--lockfile", lock, "--policy", `{"offer": "patch", "pin": true}`}, `"pin"`},
		{[]string{"--manifest", manifestPath, "--policy", `{"offer": "patch"}`}, "a manifest says its own policy"},
	} {
		stdout, stderr, code := cliStderr(t, env(""), append([]string{"components", "sync"}, c.args...)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("sync %v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
	if after := policies(); len(after) != len(before) || after["core"] != before["core"] {
		t.Fatalf("refused syncs changed the policies: %v, then %v", before, after)
	}
}
