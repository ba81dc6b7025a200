package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

// cliOut runs the program in-process like cli, and also returns stderr.
func cliOut(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(env["STDIN"]), &out, &errOut)
	code = exitCode(err, &errOut)
	return out.String(), errOut.String(), code
}

// commandPaths lists every command the usage text names, and each group
// on its own ("token", "token list", …): the words after "upcheck" up to
// the first flag, placeholder or choice.
func commandPaths() []string {
	entries, _ := usageParts()
	seen := map[string]bool{}
	var paths []string
	for _, e := range entries {
		// The command, without the description beside it.
		first := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(strings.SplitN(e, "\n", 2)[0]), 2)[0]
		var words []string
		for _, w := range strings.Fields(first)[1:] {
			if strings.ContainsAny(w[:1], "-[ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
				break
			}
			words = append(words, w)
		}
		for n := 1; n <= len(words); n++ {
			if p := strings.Join(words[:n], " "); !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	return paths
}

// Every command and group answers -h and --help with its usage on stdout
// and exit 0, without configuration or a database (the environment here
// would not even parse).
func TestHelpExitsZeroForEveryCommand(t *testing.T) {
	t.Parallel()
	paths := commandPaths()
	for _, want := range []string{"check", "serve", "user passwd", "token list", "token revoke", "notify add webhook", "publisher sign",
		"publisher init", "publisher release add", "publisher advisory add", "publisher lint"} {
		if !strings.Contains("\n"+strings.Join(paths, "\n")+"\n", "\n"+want+"\n") {
			t.Fatalf("the usage text names no %q: %q", want, paths)
		}
	}
	badEnv := map[string]string{"UPCHECK_TEST_TIMINGS": "lease=oops"}
	for _, p := range paths {
		for _, flag := range []string{"--help", "-h"} {
			args := append(strings.Fields(p), flag)
			stdout, stderr, code := cliOut(t, badEnv, args...)
			if code != 0 || !strings.Contains(stdout, "upcheck "+p) || stderr != "" {
				t.Errorf("upcheck %s: exit %d, stdout %q, stderr %q; want its usage on stdout and exit 0", strings.Join(args, " "), code, stdout, stderr)
			}
		}
	}
	if stdout, _, code := cliOut(t, nil, "check", "--manual", "--help"); code != 0 || !strings.Contains(stdout, "Exit codes of check") {
		t.Errorf("check --manual --help: exit %d, %q; want the usage and the exit codes", code, stdout)
	}
	if _, _, code := cliOut(t, nil, "frobnicate", "--help"); code != 2 {
		t.Errorf("unknown command with --help: exit %d, want 2", code)
	}
}

// `user passwd` reads the new password from stdin, under the rule of
// `user add`, and ends every session of the account; the account's API
// tokens keep working and the command says so.
func TestUserPasswd(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	env := func(stdin string) map[string]string {
		return map[string]string{"UPCHECK_DATABASE_URL": d.URL, "STDIN": stdin}
	}
	for _, email := range []string{"ops@example.test", "other@example.test"} {
		if _, _, code := cliOut(t, env("a long enough password\n"), "user", "add", "--email", email, "--role", "admin"); code != 0 {
			t.Fatalf("user add %s: exit %d", email, code)
		}
	}
	session := func(fill byte, email string) {
		d.MustExec(t, `INSERT INTO sessions (id, user_id, csrf_token, expires_at)
			SELECT $1, id, 'csrf', clock_timestamp() + interval '1 hour' FROM users WHERE email = $2`, bytes.Repeat([]byte{fill}, 32), email)
	}
	session(1, "ops@example.test")
	session(2, "ops@example.test")
	session(3, "other@example.test")
	hash := func() string {
		var h string
		d.QueryRow(t, "SELECT password_hash FROM users WHERE email = 'ops@example.test'").Scan(&h)
		return h
	}
	before := hash()

	for _, c := range []struct {
		name, stdin string
		args        []string
		code        int
	}{
		{"too short", "short\n", []string{"--email", "ops@example.test"}, 1},
		{"empty", "\n", []string{"--email", "ops@example.test"}, 1},
		{"no stdin", "", []string{"--email", "ops@example.test"}, 1},
		{"unknown account", "a new long passphrase\n", []string{"--email", "nobody@example.test"}, 1},
		{"no email", "a new long passphrase\n", nil, 2},
	} {
		if _, _, code := cliOut(t, env(c.stdin), append([]string{"user", "passwd"}, c.args...)...); code != c.code {
			t.Errorf("user passwd, %s: exit %d, want %d", c.name, code, c.code)
		}
	}
	if hash() != before {
		t.Fatal("a refused passwd changed the password")
	}

	if _, _, code := cliOut(t, env(""), "token", "create", "--email", "ops@example.test", "--name", "ci"); code != 0 {
		t.Fatal("token create failed")
	}
	stdout, stderr, code := cliOut(t, env("a new long passphrase\r\n"), "user", "passwd", "--email", "OPS@example.test")
	if code != 0 {
		t.Fatalf("user passwd: exit %d, stderr %s", code, stderr)
	}
	var line struct {
		Email         string `json:"email"`
		SessionsEnded int    `json:"sessions_ended"`
		LiveTokens    int    `json:"live_tokens"`
	}
	if err := json.Unmarshal([]byte(stdout), &line); err != nil || line.Email != "ops@example.test" || line.SessionsEnded != 2 || line.LiveTokens != 1 {
		t.Fatalf("user passwd printed %q (%v)", stdout, err)
	}
	if !strings.Contains(stderr, "token list --email ops@example.test") {
		t.Fatalf("stderr %q does not say how to list the tokens that still work", stderr)
	}
	if after := hash(); after == before || !strings.HasPrefix(after, "$argon2id$") || strings.Contains(after, "passphrase") {
		t.Fatalf("password hash after passwd: %q", after)
	}
	var left, others int
	d.QueryRow(t, "SELECT count(*) FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = 'ops@example.test'").Scan(&left)
	d.QueryRow(t, "SELECT count(*) FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = 'other@example.test'").Scan(&others)
	if left != 0 || others != 1 {
		t.Fatalf("sessions after passwd: %d of the account (want 0), %d of another (want 1)", left, others)
	}
}

var tokenLine = regexp.MustCompile(`^(\d+)\t([^\t]+)\t([^\t]+)\t(full|read-only)\t(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\t(never|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\t(never|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\t(active|expired|revoked)\t(all|none|[a-z0-9,-]+)$`)

// `token list` prints one token a line, its id first, and never a secret;
// `token revoke` revokes by id, and an unknown id is exit 1 with a clear
// message.
func TestTokenListAndRevoke(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "STDIN": "a long enough password\n"}
	for _, email := range []string{"ops@example.test", "metrics@example.test"} {
		if _, _, code := cliOut(t, env, "user", "add", "--email", email, "--role", "viewer"); code != 0 {
			t.Fatalf("user add %s failed", email)
		}
	}
	var secrets []string
	for _, c := range [][2]string{{"ops@example.test", "deploy script"}, {"metrics@example.test", "prometheus"}} {
		out, _, code := cliOut(t, env, "token", "create", "--email", c[0], "--name", c[1])
		if code != 0 {
			t.Fatalf("token create for %s failed", c[0])
		}
		secrets = append(secrets, strings.TrimSpace(out))
	}
	d.MustExec(t, "UPDATE api_tokens SET last_used_at = '2026-01-02T03:04:05Z' WHERE name = 'prometheus'")

	list := func(args ...string) [][]string {
		t.Helper()
		out, stderr, code := cliOut(t, env, append([]string{"token", "list"}, args...)...)
		if code != 0 {
			t.Fatalf("token list %v: exit %d, %s", args, code, stderr)
		}
		for _, s := range secrets {
			if strings.Contains(out, s) || strings.Contains(out, "upc_") {
				t.Fatalf("token list shows a secret: %q", out)
			}
		}
		var rows [][]string
		for sc := bufio.NewScanner(strings.NewReader(out)); sc.Scan(); {
			m := tokenLine.FindStringSubmatch(sc.Text())
			if m == nil {
				t.Fatalf("token list line %q: want id, name, owner, scope, created, last used, expires, state, sites, tab-separated", sc.Text())
			}
			rows = append(rows, m[1:])
		}
		return rows
	}
	rows := list()
	if len(rows) != 2 || rows[0][1] != "deploy script" || rows[0][2] != "ops@example.test" || rows[0][3] != "full" || rows[0][5] != "never" ||
		rows[0][6] != "never" || rows[0][7] != "active" ||
		rows[1][1] != "prometheus" || rows[1][2] != "metrics@example.test" || rows[1][5] != "2026-01-02T03:04:05Z" {
		t.Fatalf("token list = %q", rows)
	}
	if only := list("--email", "metrics@example.test"); len(only) != 1 || only[0][0] != rows[1][0] {
		t.Fatalf("token list --email = %q, want only the prometheus token", only)
	}

	out, _, code := cliOut(t, env, "token", "revoke", rows[0][0])
	if code != 0 || out != "token "+rows[0][0]+" revoked\n" {
		t.Fatalf("token revoke: %q, exit %d", out, code)
	}
	if rows := list(); rows[0][7] != "revoked" || rows[1][7] != "active" {
		t.Fatalf("after revoke: %q", rows)
	}
	var revoked bool
	d.QueryRow(t, "SELECT revoked FROM api_tokens WHERE id = $1::bigint", rows[0][0]).Scan(&revoked)
	if !revoked {
		t.Fatal("the token is not revoked in the database")
	}
	if _, _, code := cliOut(t, env, "token", "revoke", rows[0][0]); code != 0 {
		t.Fatalf("revoking a revoked token again: exit %d, want 0", code)
	}

	_, stderr, code := cliOut(t, env, "token", "revoke", "99999")
	if code != 1 || !strings.Contains(stderr, "no API token has id 99999") {
		t.Fatalf("revoke of an unknown id: exit %d, %q", code, stderr)
	}
	if _, _, code := cliOut(t, env, "token", "revoke", "abc"); code != 2 {
		t.Fatalf("revoke abc: exit %d, want 2", code)
	}
	if _, stderr, code := cliOut(t, env, "token", "list", "--email", "nobody@example.test"); code != 1 || !strings.Contains(stderr, `no account has the email "nobody@example.test"`) {
		t.Fatalf("list for an unknown account: exit %d, %q", code, stderr)
	}
	if _, _, code := cliOut(t, env, "token", "frob"); code != 2 {
		t.Fatalf("token frob: exit %d, want 2", code)
	}
}

// The README's commands are the binary `make build` writes, and each one
// exists: its --help exits 0.
func TestREADMECommandsRunAsWritten(t *testing.T) {
	t.Parallel()
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^BIN\s*:=\s*bin/upcheck$`).Match(makefile) {
		t.Fatal("the Makefile no longer builds bin/upcheck, which the README's commands run")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	inBlock, commands := false, 0
	for sc := bufio.NewScanner(bytes.NewReader(readme)); sc.Scan(); {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			continue
		}
		for _, words := range shellCommands(line) {
			if words[0] != "bin/upcheck" {
				if strings.HasSuffix(words[0], "upcheck") {
					t.Errorf("README runs %q: use bin/upcheck, the path make build writes", strings.TrimSpace(line))
				}
				continue
			}
			var path []string
			for _, w := range words[1:] {
				if strings.ContainsAny(w[:1], "-[<>$ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
					break
				}
				path = append(path, w)
			}
			if len(path) == 0 {
				t.Errorf("README: %q runs upcheck without a command", strings.TrimSpace(line))
				continue
			}
			commands++
			if stdout, _, code := cliOut(t, nil, append(path, "--help")...); code != 0 || !strings.Contains(stdout, "upcheck "+path[0]) {
				t.Errorf("README: %q: `upcheck %s --help` exits %d; the command does not exist as written", strings.TrimSpace(line), strings.Join(path, " "), code)
			}
		}
	}
	if commands < 10 {
		t.Fatalf("found %d bin/upcheck commands in the README; the parsing is broken", commands)
	}
}

// shellCommands splits a line of a shell example into its commands (at |,
// &&, || and ;), each without its leading VAR=value assignments and
// without the comment.
func shellCommands(line string) [][]string {
	code, _, _ := strings.Cut(line, "#")
	var out [][]string
	var cur []string
	flush := func() {
		for len(cur) > 0 && strings.Contains(cur[0], "=") && !strings.HasPrefix(cur[0], "-") {
			cur = cur[1:]
		}
		if len(cur) > 0 {
			out = append(out, cur)
		}
		cur = nil
	}
	for _, f := range strings.Fields(code) {
		switch f {
		case "|", "&&", "||", ";":
			flush()
		default:
			cur = append(cur, f)
		}
	}
	flush()
	return out
}

// `token create --read-only --expires D` prints the secret alone on stdout
// and stores the scope and the expiry; `token list` shows both, and
// "expired" once the expiry passed; a bad --expires is a usage error that
// creates nothing.
func TestTokenCreateScopeAndExpiry(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "STDIN": "a long enough password\n"}
	if _, _, code := cliOut(t, env, "user", "add", "--email", "ops@example.test", "--role", "admin"); code != 0 {
		t.Fatal("user add failed")
	}
	out, stderr, code := cliOut(t, env, "token", "create", "--email", "ops@example.test", "--name", "grafana", "--read-only", "--expires", "90d")
	if code != 0 || !regexp.MustCompile(`^upc_[A-Za-z0-9_-]{43}\n$`).MatchString(out) {
		t.Fatalf("token create: exit %d, stdout %q (want the secret alone), stderr %q", code, out, stderr)
	}
	if !strings.Contains(stderr, "read-only") || !strings.Contains(stderr, "expires 20") {
		t.Fatalf("token create's stderr %q does not say the scope and the expiry", stderr)
	}
	var readOnly bool
	var days float64
	d.QueryRow(t, "SELECT read_only, extract(epoch FROM expires_at - created_at) / 86400 FROM api_tokens WHERE name = 'grafana'").Scan(&readOnly, &days)
	if !readOnly || days < 89.99 || days > 90.01 {
		t.Fatalf("stored: read_only %v, lifetime %.3f days; want read-only for 90 days", readOnly, days)
	}
	if _, _, code := cliOut(t, env, "token", "create", "--email", "ops@example.test", "--name", "forever", "--expires", "never"); code != 0 {
		t.Fatal("token create --expires never failed")
	}
	for _, bad := range []string{"soon", "30", "0d", "20s"} {
		_, stderr, code := cliOut(t, env, "token", "create", "--email", "ops@example.test", "--name", "bad", "--expires", bad)
		if code != 2 || !strings.Contains(stderr, "--expires") {
			t.Errorf("--expires %s: exit %d, %q; want a usage error naming --expires", bad, code, stderr)
		}
	}
	if _, stderr, code := cliOut(t, env, "token", "create", "--email", "nobody@example.test"); code != 1 || !strings.Contains(stderr, `no account has the email "nobody@example.test"`) {
		t.Errorf("token create for an unknown account: exit %d, %q", code, stderr)
	}

	list := func() map[string][]string {
		t.Helper()
		out, stderr, code := cliOut(t, env, "token", "list")
		if code != 0 {
			t.Fatalf("token list: exit %d, %s", code, stderr)
		}
		rows := map[string][]string{}
		for sc := bufio.NewScanner(strings.NewReader(out)); sc.Scan(); {
			m := tokenLine.FindStringSubmatch(sc.Text())
			if m == nil {
				t.Fatalf("token list line %q", sc.Text())
			}
			rows[m[2]] = m[1:]
		}
		return rows
	}
	rows := list()
	if len(rows) != 2 || rows["grafana"][3] != "read-only" || rows["grafana"][6] == "never" || rows["grafana"][7] != "active" ||
		rows["forever"][3] != "full" || rows["forever"][6] != "never" {
		t.Fatalf("token list = %q", rows)
	}
	d.MustExec(t, "UPDATE api_tokens SET expires_at = clock_timestamp() - interval '1 second' WHERE name = 'grafana'")
	if rows := list(); rows["grafana"][7] != "expired" || rows["forever"][7] != "active" {
		t.Fatalf("token list after the expiry = %q", rows)
	}
	var audited string
	d.QueryRow(t, "SELECT detail->>'scope' || ' ' || (detail->>'expires_at') FROM audit_log WHERE action = 'token.create' AND detail->>'name' = 'forever'").Scan(&audited)
	if audited != "full never" {
		t.Fatalf("token.create audit of the full token: %q", audited)
	}
}
