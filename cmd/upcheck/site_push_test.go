package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// `upcheck site push` PUTs the lockfile's bytes to the push address with
// the push token read from its file (Authorization: Bearer) and the
// lockfile's name as ?name=, with no database configured, and prints the
// answer; a refusal exits 1 with upcheck's words.
func TestSitePushSendsTheLockfile(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var method, path, name, authz, body string
	refuse := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		method, path, name, authz, body = r.Method, r.URL.Path, r.URL.Query().Get("name"), r.Header.Get("Authorization"), string(b)
		w.Header().Set("Content-Type", "application/json")
		if refuse {
			w.WriteHeader(http.StatusUnprocessableEntity)
			io.WriteString(w, `{"error":"invalid lockfile: pnpm-lock.yaml line 3: not a lockfile"}`)
			return
		}
		io.WriteString(w, `{"site":"shop","packages":1}`+"\n")
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	tokenFile, lock := filepath.Join(dir, "token"), filepath.Join(dir, "pnpm-lock.yaml")
	if err := os.WriteFile(tokenFile, []byte("ups_secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, []byte("lockfileVersion: '9.0'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	url := srv.URL + "/api/sites/shop/lockfile"
	out, stderr, code := cliOut(t, nil, "site", "push", "--url", url, "--token-file", tokenFile, lock)
	if code != 0 || out != `{"site":"shop","packages":1}`+"\n" {
		t.Fatalf("push: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	mu.Lock()
	if method != "PUT" || path != "/api/sites/shop/lockfile" || name != "pnpm-lock.yaml" || authz != "Bearer ups_secret" ||
		body != "lockfileVersion: '9.0'\n" {
		t.Errorf("sent %s %s ?name=%s %q body %q", method, path, name, authz, body)
	}
	refuse = true
	mu.Unlock()
	_, stderr, code = cliOut(t, nil, "site", "push", "--url", url, "--token-file", tokenFile, lock)
	if code != 1 || !strings.Contains(stderr, "refused (422): invalid lockfile: pnpm-lock.yaml line 3") {
		t.Errorf("a refusal: exit %d, stderr %q", code, stderr)
	}
	if _, _, code := cliOut(t, nil, "site", "push", "--url", url, lock); code != 2 {
		t.Errorf("no --token-file: exit %d, want 2 (usage)", code)
	}
}
