package verdaccio

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Site is a site's package.json: its dependencies by kind
// ("dependencies", "devDependencies", "optionalDependencies") and range.
type Site map[string]map[string]string

// Lock writes site's package.json into a folder of its own and has client
// ("npm" or "pnpm") lock it against this registry, without installing:
// `npm install --package-lock-only` writes package-lock.json, `pnpm
// install --lockfile-only` writes pnpm-lock.yaml. It returns the lockfile's
// path.
func (r *Registry) Lock(t testing.TB, client string, site Site) string {
	t.Helper()
	dir, err := os.MkdirTemp(r.dir, "site-*")
	if err != nil {
		t.Fatal(err)
	}
	manifest := map[string]any{"name": "site", "version": "1.0.0", "private": true}
	for kind, deps := range site {
		manifest[kind] = deps
	}
	b, err := json.Marshal(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	switch client {
	case "npm":
		r.Run(t, "npm", dir, "install", "--package-lock-only", "--ignore-scripts")
		return filepath.Join(dir, "package-lock.json")
	case "pnpm":
		r.Run(t, "pnpm", dir, "install", "--lockfile-only", "--ignore-scripts")
		return filepath.Join(dir, "pnpm-lock.yaml")
	}
	t.Fatalf("no such client %q", client)
	return ""
}

// Run runs client ("npm" or "pnpm") with args in dir, against this
// registry only (no token, a cache and a store of the registry's own, none
// of the machine's settings), and returns what it printed on stdout.
func (r *Registry) Run(t testing.TB, client, dir string, args ...string) []byte {
	t.Helper()
	rc := r.Npmrc(t, "")
	var cmd *exec.Cmd
	switch client {
	case "npm":
		cmd = exec.Command("npm", append(args, "--userconfig", rc, "--registry", r.URL, "--cache", filepath.Join(r.dir, "npm-cache"),
			"--no-audit", "--no-fund", "--no-update-notifier", "--loglevel", "error")...)
	case "pnpm":
		bin, err := tool("pnpm", "bin", "pnpm.cjs")
		if err != nil {
			t.Fatal(err)
		}
		// Settings as variables: not every command takes them as flags.
		cmd = exec.Command("node", append([]string{bin}, args...)...)
		cmd.Env = []string{"npm_config_registry=" + r.URL, "npm_config_store_dir=" + filepath.Join(r.dir, "pnpm-store"), "npm_config_userconfig=" + rc}
	default:
		t.Fatalf("no such client %q", client)
	}
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), cmd.Env...), "npm_config_globalconfig="+filepath.Join(r.dir, "no-global-npmrc"), "CI=true")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", client, strings.Join(args, " "), err, out, stderr.String())
	}
	return out
}
