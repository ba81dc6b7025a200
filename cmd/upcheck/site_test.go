package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

var siteLine = regexp.MustCompile(`^([a-z0-9-]+)\t([^\t]*)\t(-|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\t(-|never|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\t([^\t]+)\t([^\t]+)$`)

// `site add` prints the push token once, on its last line, and `site
// list` never; `site rotate` prints a new one and the old one stops
// working (the store's lookup by hash finds it no more); `site remove`
// removes a registered site and refuses the local one; names are checked.
func TestSiteCommands(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	st := store.New(d.Pool)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL}
	lastLine := func(out string) string {
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		return lines[len(lines)-1]
	}
	lookup := func(token string) (store.Site, error) {
		sum := sha256.Sum256([]byte(token))
		return st.SiteByPushToken(context.Background(), sum[:])
	}

	out, stderr, code := cliOut(t, env, "site", "add", "acme-shop", "--owner", "Acme Ltd")
	if code != 0 {
		t.Fatalf("site add: exit %d, %s", code, stderr)
	}
	token := lastLine(out)
	if !strings.HasPrefix(token, "ups_") || !strings.Contains(out, "acme-shop") {
		t.Fatalf("site add printed %q", out)
	}
	if s, err := lookup(token); err != nil || s.Name != "acme-shop" || s.Owner != "Acme Ltd" {
		t.Fatalf("the token printed: %+v, %v", s, err)
	}
	if _, stderr, code := cliOut(t, env, "site", "add", "acme-shop"); code != 1 || !strings.Contains(stderr, "registered already") {
		t.Errorf("a second acme-shop: exit %d, %q", code, stderr)
	}
	if _, stderr, code := cliOut(t, env, "site", "add", "Acme_Shop"); code != 1 || !strings.Contains(stderr, "lower-case") {
		t.Errorf("a bad name: exit %d, %q", code, stderr)
	}
	if _, _, code := cliOut(t, env, "site", "add"); code != 2 {
		t.Errorf("site add without a name: exit %d, want 2", code)
	}

	list := func() [][]string {
		t.Helper()
		out, stderr, code := cliOut(t, env, "site", "list")
		if code != 0 {
			t.Fatalf("site list: exit %d, %s", code, stderr)
		}
		if strings.Contains(out, "ups_") {
			t.Fatalf("site list shows a push token: %q", out)
		}
		var rows [][]string
		for sc := bufio.NewScanner(strings.NewReader(out)); sc.Scan(); {
			m := siteLine.FindStringSubmatch(sc.Text())
			if m == nil {
				t.Fatalf("site list line %q: want name, owner, registered, last push, words, policy, tab-separated", sc.Text())
			}
			rows = append(rows, m[1:])
		}
		return rows
	}
	rows := list()
	if len(rows) != 2 || rows[0][0] != "local" || rows[0][2] != "-" || rows[1][0] != "acme-shop" || rows[1][1] != "Acme Ltd" ||
		rows[1][3] != "never" || rows[1][4] != "never pushed" || rows[0][5] != "-" ||
		rows[1][5] != "every update, as soon as it is published" {
		t.Fatalf("site list = %q", rows)
	}
	d.MustExec(t, `UPDATE sites SET pushed_at = clock_timestamp() - interval '9 days' WHERE name = 'acme-shop'`)
	if rows := list(); rows[1][4] != "last push 9 days ago: stale" {
		t.Errorf("a site quiet for 9 days: %q", rows[1][4])
	}
	if rows := cliList(t, map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_SITE_STALE_AFTER": "10d"}); rows[1][4] != "last push 9 days ago" {
		t.Errorf("a site quiet for 9 days under UPCHECK_SITE_STALE_AFTER=10d: %q", rows[1][4])
	}

	out, stderr, code = cliOut(t, env, "site", "rotate", "acme-shop")
	if code != 0 {
		t.Fatalf("site rotate: exit %d, %s", code, stderr)
	}
	rotated := lastLine(out)
	if !strings.HasPrefix(rotated, "ups_") || rotated == token {
		t.Fatalf("site rotate printed %q", out)
	}
	if _, err := lookup(token); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the old token after rotate: %v, want ErrNotFound", err)
	}
	if s, err := lookup(rotated); err != nil || s.Name != "acme-shop" {
		t.Fatalf("the new token: %+v, %v", s, err)
	}
	for _, cmd := range []string{"rotate", "remove"} {
		if _, stderr, code := cliOut(t, env, "site", cmd, "local"); code != 1 || !strings.Contains(stderr, "local site") {
			t.Errorf("site %s local: exit %d, %q", cmd, code, stderr)
		}
		if _, stderr, code := cliOut(t, env, "site", cmd, "nope"); code != 1 || !strings.Contains(stderr, `no site is named "nope"`) {
			t.Errorf("site %s nope: exit %d, %q", cmd, code, stderr)
		}
	}
	if out, _, code := cliOut(t, env, "site", "remove", "acme-shop"); code != 0 || !strings.Contains(out, "acme-shop removed") {
		t.Fatalf("site remove: exit %d, %q", code, out)
	}
	if _, err := lookup(rotated); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the token of a removed site: %v", err)
	}
	if rows := list(); len(rows) != 1 || rows[0][0] != "local" {
		t.Fatalf("after remove: %q", rows)
	}
}

// `site policy NAME --policy JSON` sets a registered site's policy (the
// manifest parser's: a malformed one is refused in its words and changes
// nothing), writes its components under it, says it without a flag and
// in `site list`, and `--default` gives the default back; the local
// site's is refused, saying where it comes from.
func TestSitePolicyCommand(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL}
	if _, stderr, code := cliOut(t, env, "site", "add", "shop"); code != 0 {
		t.Fatalf("site add: exit %d, %s", code, stderr)
	}
	d.MustExec(t, `INSERT INTO components (site_id, code, name, installed_version, source_url, package)
		SELECT id, 'left-pad', 'left-pad', '1.3.0', 'npm:left-pad', 'left-pad' FROM sites WHERE name = 'shop'`)
	policyOf := func(args ...string) map[string]any {
		t.Helper()
		out, stderr, code := cliOut(t, env, append([]string{"site", "policy", "shop"}, args...)...)
		if code != 0 {
			t.Fatalf("site policy %v: exit %d, %s", args, code, stderr)
		}
		var line map[string]any
		if err := json.Unmarshal([]byte(out), &line); err != nil {
			t.Fatalf("site policy %v printed %q: %v", args, out, err)
		}
		return line
	}
	stored := func() (site, component string) {
		t.Helper()
		d.QueryRow(t, `SELECT s.policy, coalesce(c.policy, '') FROM sites s JOIN components c ON c.site_id = s.id
			WHERE s.name = 'shop'`).Scan(&site, &component)
		return
	}

	line := policyOf("--policy", `{"offer": "patch", "soak": "3d"}`)
	if line["text"] != "takes patch updates only · soak 3 days" || line["components"] != 1.0 || line["unchanged"] != false {
		t.Errorf("site policy --policy: %v", line)
	}
	if s, c := stored(); s != `{"offer":"patch","soak":"3d"}` || c != s {
		t.Errorf("stored: site %q, component %q", s, c)
	}
	if line := policyOf(); line["text"] != "takes patch updates only · soak 3 days" || line["components"] != nil {
		t.Errorf("site policy without a flag: %v", line)
	}
	if rows := cliList(t, env); rows[1][5] != "takes patch updates only · soak 3 days" {
		t.Errorf("site list's policy: %q", rows[1][5])
	}

	if _, stderr, code := cliOut(t, env, "site", "policy", "shop", "--policy", `{"offer": "weekly"}`); code != 1 ||
		!strings.Contains(stderr, `offer "weekly" is not one of all, minor, patch, security`) {
		t.Errorf("a malformed policy: exit %d, %q", code, stderr)
	}
	if s, c := stored(); s != `{"offer":"patch","soak":"3d"}` || c != s {
		t.Errorf("stored after a refusal: site %q, component %q", s, c)
	}
	if _, stderr, code := cliOut(t, env, "site", "policy", "local", "--policy", `{"offer": "patch"}`); code != 1 ||
		!strings.Contains(stderr, "manifest") {
		t.Errorf("the local site's policy: exit %d, %q", code, stderr)
	}
	if _, stderr, code := cliOut(t, env, "site", "policy", "nope"); code != 1 || !strings.Contains(stderr, `no site is named "nope"`) {
		t.Errorf("site policy nope: exit %d, %q", code, stderr)
	}
	if _, _, code := cliOut(t, env, "site", "policy", "shop", "--default", "--policy", "{}"); code != 2 {
		t.Errorf("--default with --policy: exit %d, want 2", code)
	}

	if line := policyOf("--default"); line["text"] != "every update, as soon as it is published" || line["components"] != 1.0 {
		t.Errorf("site policy --default: %v", line)
	}
	if s, c := stored(); s != "" || c != "" {
		t.Errorf("stored after --default: site %q, component %q", s, c)
	}
	var audited int
	d.QueryRow(t, `SELECT count(*) FROM audit_log WHERE action = 'site.policy'`).Scan(&audited)
	if audited != 2 {
		t.Errorf("%d site.policy audit rows, want 2", audited)
	}
}

func cliList(t *testing.T, env map[string]string) [][]string {
	t.Helper()
	out, stderr, code := cliOut(t, env, "site", "list")
	if code != 0 {
		t.Fatalf("site list: exit %d, %s", code, stderr)
	}
	var rows [][]string
	for sc := bufio.NewScanner(strings.NewReader(out)); sc.Scan(); {
		rows = append(rows, siteLine.FindStringSubmatch(sc.Text())[1:])
	}
	return rows
}

// `user sites` limits a user to some sites, says which, and lets them see
// every site again; `token create --sites` limits a token within its
// owner's sites, and `token list` says which.
func TestUserAndTokenSites(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "STDIN": "a long enough password\n"}
	if _, _, code := cliOut(t, env, "user", "add", "--email", "ops@example.test", "--role", "viewer"); code != 0 {
		t.Fatal("user add failed")
	}
	for _, n := range []string{"a", "b"} {
		if _, _, code := cliOut(t, env, "site", "add", n); code != 0 {
			t.Fatalf("site add %s failed", n)
		}
	}
	type line struct {
		Email   string   `json:"email"`
		Limited bool     `json:"limited"`
		Sites   []string `json:"sites"`
	}
	sites := func(args ...string) line {
		t.Helper()
		out, stderr, code := cliOut(t, env, append([]string{"user", "sites", "ops@example.test"}, args...)...)
		var l line
		if code != 0 || json.Unmarshal([]byte(out), &l) != nil {
			t.Fatalf("user sites %v: exit %d, %q %q", args, code, out, stderr)
		}
		return l
	}
	if l := sites(); l.Limited || len(l.Sites) != 0 {
		t.Fatalf("a new user: %+v", l)
	}
	if l := sites("--sites", "b,local"); !l.Limited || !slices.Equal(l.Sites, []string{"b", "local"}) {
		t.Fatalf("--sites b,local: %+v", l)
	}
	if l := sites(); !l.Limited || !slices.Equal(l.Sites, []string{"b", "local"}) {
		t.Fatalf("said again: %+v", l)
	}
	if _, stderr, code := cliOut(t, env, "user", "sites", "ops@example.test", "--sites", "nope"); code != 1 || !strings.Contains(stderr, `"nope"`) {
		t.Errorf("--sites nope: exit %d, %q", code, stderr)
	}
	if _, _, code := cliOut(t, env, "user", "sites", "ops@example.test", "--sites", "a", "--all"); code != 2 {
		t.Errorf("--sites and --all: exit %d, want 2", code)
	}
	if _, stderr, code := cliOut(t, env, "user", "sites", "nobody@example.test", "--all"); code != 1 || !strings.Contains(stderr, "no account") {
		t.Errorf("an unknown account: exit %d, %q", code, stderr)
	}

	if _, stderr, code := cliOut(t, env, "token", "create", "--email", "ops@example.test", "--sites", "a"); code != 1 || !strings.Contains(stderr, "owner may see") {
		t.Errorf("a token beyond its owner's sites: exit %d, %q", code, stderr)
	}
	if _, stderr, code := cliOut(t, env, "token", "create", "--email", "ops@example.test", "--name", "b only", "--sites", "b"); code != 0 {
		t.Fatalf("token create --sites b: exit %d, %s", code, stderr)
	}
	if _, _, code := cliOut(t, env, "token", "create", "--email", "ops@example.test", "--name", "as owner"); code != 0 {
		t.Fatal("token create failed")
	}
	out, _, _ := cliOut(t, env, "token", "list")
	if !strings.Contains(out, "b only\tops@example.test\tfull\t") || !strings.HasSuffix(strings.Split(out, "\n")[0], "\tb") ||
		!strings.HasSuffix(strings.Split(out, "\n")[1], "\tall") {
		t.Errorf("token list: %q", out)
	}

	if l := sites("--all"); l.Limited || len(l.Sites) != 0 {
		t.Fatalf("--all: %+v", l)
	}
}
