package lockfile_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/lockfile"
	"github.com/upcheck/upcheck/internal/testing/verdaccio"
	"github.com/upcheck/upcheck/internal/tree"
)

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// publishRealSite publishes the registry's packages of realSite and
// returns the git repository's and the tarball's URLs.
func publishRealSite(t *testing.T, reg *verdaccio.Registry) (gitURL, tarURL string) {
	t.Helper()
	token := reg.AddUser(t, "publisher")
	deps := func(kv ...string) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	reg.PublishAll(t, token, []verdaccio.Package{
		{Name: "tp-shared", Version: "1.0.0"},
		{Name: "tp-shared", Version: "2.0.0"},
		{Name: "tp-a", Version: "1.0.0", Fields: map[string]any{"dependencies": deps("tp-shared", "^2.0.0", "tp-x", "^1.0.0")}},
		{Name: "tp-x", Version: "1.0.0", Fields: map[string]any{"dependencies": deps("tp-y", "^1.0.0")}},
		{Name: "tp-y", Version: "1.0.0", Fields: map[string]any{"dependencies": deps("tp-x", "^1.0.0")}},
		{Name: "tp-dev", Version: "1.0.0", Fields: map[string]any{"dependencies": deps("tp-shared", "^1.0.0", "tp-devopt", "^1.0.0")}},
		{Name: "tp-opt", Version: "1.0.0", Fields: map[string]any{"dependencies": deps("tp-devopt", "^1.0.0")}},
		{Name: "tp-devopt", Version: "1.0.0"},
		{Name: "tp-plugin", Version: "1.0.0", Fields: map[string]any{"peerDependencies": deps("tp-peer", "^1.0.0")}},
		{Name: "tp-peer", Version: "1.0.0"},
		{Name: "tp-real", Version: "1.2.0"},
		{Name: "tp-script", Version: "1.0.0", Fields: map[string]any{"scripts": deps("install", "node -e 0")}},
		{Name: "tp-tar", Version: "0.4.0"},
	}...)
	// The git dependency: a bare repository on disk.
	src := t.TempDir()
	writeJSON(t, filepath.Join(src, "package.json"), map[string]any{"name": "tp-git", "version": "0.3.0", "dependencies": deps("tp-shared", "^1.0.0")})
	run(t, src, "git", "init", "-q", "-b", "main")
	run(t, src, "git", "add", ".")
	run(t, src, "git", "commit", "-q", "-m", "tp-git 0.3.0")
	run(t, src, "git", "tag", "v0.3.0")
	bare := filepath.Join(t.TempDir(), "tp-git.git")
	run(t, src, "git", "clone", "-q", "--bare", src, bare)
	// The tarball: served at an address of no registry's form by a
	// server that passes on the registry's.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/tp-tar-0.4.0.tgz" {
			http.NotFound(w, req)
			return
		}
		resp, err := http.Get(reg.URL + "tp-tar/-/tp-tar-0.4.0.tgz")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	return "git+file://" + bare + "#v0.3.0", srv.URL + "/tp-tar-0.4.0.tgz"
}

// installRealSite writes realSite's files into a folder of its own and has
// client install it (scripts not run).
func installRealSite(t *testing.T, reg *verdaccio.Registry, client, gitURL, tarURL string) string {
	t.Helper()
	dir := t.TempDir()
	site := map[string]any{
		"name": "site", "version": "1.0.0", "private": true,
		"dependencies": map[string]any{
			"tp-shared": "^1.0.0", "tp-a": "^1.0.0", "tp-alias": "npm:tp-real@^1.0.0", "tp-script": "^1.0.0", "tp-plugin": "^1.0.0",
			"tp-local": "file:./local/tp-local", "tp-git": gitURL, "tp-tar": tarURL,
		},
		"devDependencies":      map[string]any{"tp-dev": "^1.0.0"},
		"optionalDependencies": map[string]any{"tp-opt": "^1.0.0"},
	}
	ws := map[string]any{"name": "tp-ws", "version": "0.1.0", "dependencies": map[string]any{"tp-a": "^1.0.0"}, "devDependencies": map[string]any{"tp-dev": "^1.0.0"}}
	switch client {
	case "npm":
		site["workspaces"] = []string{"packages/*"}
	case "pnpm":
		if err := os.WriteFile(filepath.Join(dir, "pnpm-workspace.yaml"), []byte("packages:\n  - packages/*\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeJSON(t, filepath.Join(dir, "package.json"), site)
	writeJSON(t, filepath.Join(dir, "packages", "ws", "package.json"), ws)
	writeJSON(t, filepath.Join(dir, "local", "tp-local", "package.json"), map[string]any{"name": "tp-local", "version": "0.2.0", "dependencies": map[string]any{"tp-shared": "^2.0.0"}})
	reg.Run(t, client, dir, "install", "--ignore-scripts")
	return dir
}

// lsNode is a package as `npm ls --all --json --long` and `pnpm list
// --json` print it.
type lsNode struct {
	Name, Version, Path, From string
	Dev, Optional, Peer       bool
	Dependencies              map[string]*lsNode
}

// lsImporter is an importer as `pnpm list --json` prints it.
type lsImporter struct {
	lsNode
	DevDependencies      map[string]*lsNode
	OptionalDependencies map[string]*lsNode
}

// The tree read from the lockfiles the real npm and pnpm clients wrote is
// the install they report: every package instance `npm ls --all --json`
// (and `pnpm list --depth Infinity --json`) lists is in the tree at the
// same place with the same name, version and dev and optional flags,
// reached by an edge of the same name from the same dependent, and the
// tree holds no other; and what the lockfiles say of sources, aliases,
// integrity and install scripts is read.
func TestTreeOfTheRealClients(t *testing.T) {
	t.Parallel()
	start := time.Now()
	reg := verdaccio.Start(t)
	t.Logf("verdaccio started in %v", time.Since(start))
	gitURL, tarURL := publishRealSite(t, reg)
	t.Logf("published in %v", time.Since(start))
	for _, client := range []string{"npm", "pnpm"} {
		t.Run(client, func(t *testing.T) {
			t.Parallel()
			dir := installRealSite(t, reg, client, gitURL, tarURL)
			t.Logf("installed in %v", time.Since(start))
			file := map[string]string{"npm": "package-lock.json", "pnpm": "pnpm-lock.yaml"}[client]
			l, err := lockfile.Read(filepath.Join(dir, file), lockfile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if l.DanglingCount != 0 {
				t.Errorf("dangling: %v", l.Dangling)
			}
			byID := map[string]tree.Package{}
			for _, p := range l.Tree.Packages {
				byID[p.ID] = p
			}
			seen := map[string]bool{}
			prod := map[string]bool{}  // pnpm: reached by a section that is not devDependencies
			walked := map[string]int{} // 1: walked from devDependencies, 2: from the others
			// follow checks the instance an ls node is, reached from the
			// dependent from by name, and walks on from it.
			var follow func(from, name string, n *lsNode, dev bool)
			follow = func(from, name string, n *lsNode, dev bool) {
				i := slices.IndexFunc(l.Tree.Edges, func(e tree.Edge) bool { return e.From == from && e.Name == name && e.To != "" })
				if i < 0 {
					t.Errorf("%s reports %s under %q (%s %s); the tree has no such edge", client, name, from, n.Name, n.Version)
					return
				}
				id := l.Tree.Edges[i].To
				p := byID[id]
				real := n.Name
				if client == "pnpm" {
					real = n.From
				}
				version := n.Version
				if client == "pnpm" && p.Source == tree.SourceFile {
					version = strings.TrimPrefix(version, "file:"+strings.TrimPrefix(p.Resolved, "file:")) // pnpm lists a directory's reference
				}
				if p.Name != real || p.Version != version {
					t.Errorf("%s: %s (%s) is %s@%s; %s reports %s@%s", client, id, name, p.Name, p.Version, client, real, n.Version)
				}
				if client == "npm" {
					rel, _ := filepath.Rel(dir, n.Path)
					if rel != id && !(p.Source == tree.SourceLink || p.Source == tree.SourceFile) {
						t.Errorf("npm: %s is at %s in the tree, at %s on disk", name, id, rel)
					}
					if p.Dev != n.Dev || p.Optional != n.Optional || p.Peer != n.Peer {
						t.Errorf("npm: %s dev %v optional %v peer %v; npm ls says dev %v optional %v peer %v", id, p.Dev, p.Optional, p.Peer, n.Dev, n.Optional, n.Peer)
					}
				}
				seen[id] = true
				if !dev {
					prod[id] = true
				}
				// npm lists a package it reached before without its
				// dependencies ("deduped"); a cycle ends where it began.
				if len(n.Dependencies) == 0 || walked[id] == 2 || walked[id] == 1 && dev {
					return
				}
				walked[id] = 1
				if !dev {
					walked[id] = 2
				}
				for dep, c := range n.Dependencies {
					follow(id, dep, c, dev)
				}
			}
			switch client {
			case "npm":
				var root lsNode
				if err := json.Unmarshal(reg.Run(t, "npm", dir, "ls", "--all", "--json", "--long"), &root); err != nil {
					t.Fatal(err)
				}
				for name, n := range root.Dependencies {
					follow(tree.Root, name, n, false)
				}
			case "pnpm":
				var importers []lsImporter
				if err := json.Unmarshal(reg.Run(t, "pnpm", dir, "list", "--recursive", "--depth", "Infinity", "--json"), &importers); err != nil {
					t.Fatal(err)
				}
				for _, imp := range importers {
					from, _ := filepath.Rel(dir, imp.Path)
					if from == "." {
						from = tree.Root
					} else {
						seen[from] = true
					}
					for _, section := range []struct {
						deps map[string]*lsNode
						dev  bool
					}{{imp.Dependencies, false}, {imp.OptionalDependencies, false}, {imp.DevDependencies, true}} {
						for name, n := range section.deps {
							follow(from, name, n, section.dev)
						}
					}
				}
				for id := range seen {
					if byID[id].Dev != !prod[id] && byID[id].Source != tree.SourceLink {
						t.Errorf("pnpm: %s dev %v; pnpm list reaches it only through devDependencies: %v", id, byID[id].Dev, !prod[id])
					}
				}
			}
			for id := range byID {
				if !seen[id] {
					t.Errorf("%s: the tree has %s, which %s does not report", client, id, client)
				}
			}
			for id := range seen {
				if _, ok := byID[id]; !ok {
					t.Errorf("%s reports %s, which the tree does not have", client, id)
				}
			}
			checkRealTree(t, client, l.Tree)
		})
	}
}

// checkRealTree checks what the clients' listings do not show: sources,
// aliases, integrity, install scripts, and how the site reaches packages.
func checkRealTree(t *testing.T, client string, tr *tree.Tree) {
	t.Helper()
	for i := 1; i < len(tr.Edges); i++ {
		if a, b := tr.Edges[i-1], tr.Edges[i]; a.From == b.From && a.Name == b.Name && a.Kind == b.Kind {
			t.Errorf("%s: two edges %+v and %+v", client, a, b)
		}
	}
	for i := 1; i < len(tr.Packages); i++ {
		if tr.Packages[i-1].ID == tr.Packages[i].ID {
			t.Errorf("%s: two packages %s", client, tr.Packages[i].ID)
		}
	}
	find := func(name, version string) tree.Package {
		for _, p := range tr.Packages {
			if p.Name == name && p.Version == version {
				return p
			}
		}
		t.Fatalf("%s: no %s@%s in the tree", client, name, version)
		return tree.Package{}
	}
	for _, c := range []struct {
		name, version string
		source        tree.Source
	}{
		{"tp-shared", "2.0.0", tree.SourceRegistry}, {"tp-real", "1.2.0", tree.SourceRegistry},
		{"tp-git", "0.3.0", tree.SourceGit}, {"tp-tar", "0.4.0", tree.SourceTarball},
	} {
		p := find(c.name, c.version)
		if p.Source != c.source || p.Integrity == "" && c.source != tree.SourceGit {
			t.Errorf("%s: %s@%s source %q integrity %q; want %q and an integrity", client, c.name, c.version, p.Source, p.Integrity, c.source)
		}
	}
	if p := find("tp-real", "1.2.0"); p.Alias != "tp-alias" {
		t.Errorf("%s: tp-real's alias %q, want tp-alias", client, p.Alias)
	}
	if p := find("tp-git", "0.3.0"); !strings.HasPrefix(p.Resolved, map[string]string{"npm": "git+file://", "pnpm": "file://"}[client]) || !strings.Contains(p.Resolved, "#") {
		t.Errorf("%s: tp-git resolved %q: want the repository and its commit", client, p.Resolved)
	}
	local := slices.IndexFunc(tr.Packages, func(p tree.Package) bool { return p.Name == "tp-local" })
	if local < 0 || tr.Packages[local].Source != tree.SourceFile || tr.Packages[local].Resolved != "file:local/tp-local" {
		t.Errorf("%s: tp-local, a file: directory: %+v", client, tr.Packages)
	}
	if client == "npm" {
		// pnpm 9's lockfile does not say which packages have install scripts.
		if !find("tp-script", "1.0.0").InstallScript || find("tp-shared", "1.0.0").InstallScript {
			t.Errorf("npm: hasInstallScript not read")
		}
		if p := find("tp-shared", "2.0.0"); p.ID != "node_modules/tp-a/node_modules/tp-shared" && p.ID != "local/tp-local/node_modules/tp-shared" {
			t.Errorf("npm: tp-shared 2.0.0 at %s", p.ID)
		}
	}
	// tp-plugin's peer is installed for it; npm marks it a peer.
	plugin, peer := find("tp-plugin", "1.0.0"), find("tp-peer", "1.0.0")
	if e, ok := edgeTo(tr, plugin.ID, "tp-peer"); !ok || e.Kind != tree.KindPeer || e.To != peer.ID {
		t.Errorf("%s: tp-plugin's peer edge %+v, want to %s", client, e, peer.ID)
	}
	if client == "npm" && !peer.Peer {
		t.Errorf("npm: tp-peer is not marked a peer")
	}
	// The cycle tp-x ↔ tp-y is walked once; tp-dev is reached only
	// through devDependencies (the site's and the workspace's).
	reach := tr.Reach()
	y := reach[find("tp-y", "1.0.0").ID]
	if y == nil || !slices.ContainsFunc(y.Via, func(v tree.Via) bool { return slices.Equal(v.Path, []string{"tp-a", "tp-x", "tp-y"}) }) || y.DevOnly {
		t.Errorf("%s: tp-y reached %+v; want through tp-a → tp-x → tp-y, not only for development", client, y)
	}
	if d := reach[find("tp-dev", "1.0.0").ID]; d == nil || !d.DevOnly {
		t.Errorf("%s: tp-dev reached %+v, want only for development", client, d)
	}
}
