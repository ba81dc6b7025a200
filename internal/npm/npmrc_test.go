package npm

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/testing/namedpipe"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// The hosts here are the tests' own, on loopback.
const testNpmrc = `
; a comment
# another
registry = http://127.0.0.1:4873/
@acme:registry="http://127.0.0.2:4873/npm/"
//127.0.0.2:4873/npm/:_authToken=${NPM_TOKEN}
//127.0.0.1:4873/:_authToken='top-level-token'
//127.0.0.3/:_authToken=${NPM_UNSET_TOKEN?}x
always-auth=true
strict-ssl
[section]
`

func parse(t *testing.T, text string, env map[string]string) (Registries, error) {
	t.Helper()
	return ParseNpmrc(strings.NewReader(text), "site.npmrc", func(k string) string { return env[k] })
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestNpmrcRegistriesAndTokens(t *testing.T) {
	t.Parallel()
	regs, err := parse(t, testNpmrc, map[string]string{"NPM_TOKEN": "scoped-secret"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[Name]string{
		"blog":          "http://127.0.0.1:4873/blog",
		"@vitnode/core": "http://127.0.0.1:4873/@vitnode%2fcore",
		"@acme/blog":    "http://127.0.0.2:4873/npm/@acme%2fblog",
	} {
		u, err := regs.PackageURL(name)
		if err != nil || u.String() != want {
			t.Errorf("PackageURL(%q) = %v, %v; want %s", name, u, err, want)
		}
	}
	for addr, want := range map[string]string{
		"http://127.0.0.2:4873/npm/@acme%2fblog": "scoped-secret",
		"https://127.0.0.2:4873/npm/a/b/c":       "scoped-secret", // the scheme is not part of the key
		"http://127.0.0.2:4873/other":            "",              // a sibling path has none
		"http://127.0.0.1:4873/blog":             "top-level-token",
		"http://127.0.0.1:4874/blog":             "", // another port is another host
		"http://127.0.0.3/x":                     "x",
	} {
		if got := regs.Token(mustURL(t, addr)).Reveal(); got != want {
			t.Errorf("Token(%s) = %q, want %q", addr, got, want)
		}
	}
}

func TestNpmrcErrorsNameTheLineNotTheValue(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"\n//127.0.0.1/:_authToken=${NPM_TOKEN}":   "site.npmrc line 2 (//127.0.0.1/:_authToken): the environment variable NPM_TOKEN is not set",
		"registry=ftp://127.0.0.1/":                "site.npmrc line 1 (registry): the registry is not an http or https URL",
		"registry=hunter2:x":                       "the registry is not an http or https URL",
		"registry=http://127.0.0.1/hunter2/#x":     "a fragment",
		"@bad scope:registry=http://127.0.0.1/":    "is not a scope",
		"//127.0.0.1/:_authToken=":                 "the token is empty",
		"registry=http://user:hunter2@127.0.0.1/":  "credentials",
		"registry=http://127.0.0.1/?token=hunter2": "a query",
	} {
		_, err := parse(t, text, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want an error with %q", text, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: the error %q shows the secret", text, err)
		}
	}
}

// ${NAME} is replaced only from the variables that hold npm tokens by
// convention: a line of the site's file cannot send upcheck's own settings
// (the database URL and its password) to a host of its choosing. The
// refusal names the variable, never its value.
func TestNpmrcExpandsOnlyTokenVariables(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"NPM_TOKEN": "t1", "NODE_AUTH_TOKEN": "t2", "NPM_ACME_TOKEN": "t3",
		"UPCHECK_DATABASE_URL": "postgres://upcheck:hunter2@db/upcheck", "UPCHECK_SMTP_PASSWORD": "hunter2",
		"HOME": "/home/hunter2", "npm_config_token": "hunter2", "SITE_NPM_TOKEN": "hunter2",
	}
	regs, err := parse(t, "//127.0.0.1/:_authToken=${NPM_TOKEN}\n//127.0.0.2/:_authToken=${NODE_AUTH_TOKEN}\n//127.0.0.3/:_authToken=${NPM_ACME_TOKEN}${NPM_NONE?}\n", env)
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]string{"http://127.0.0.1/x": "t1", "http://127.0.0.2/x": "t2", "http://127.0.0.3/x": "t3"} {
		if got := regs.Token(mustURL(t, addr)).Reveal(); got != want {
			t.Errorf("Token(%s) = %q, want %q", addr, got, want)
		}
	}
	for _, name := range []string{"UPCHECK_DATABASE_URL", "UPCHECK_SMTP_PASSWORD?", "HOME", "npm_config_token", "SITE_NPM_TOKEN", "NPM_TOKEN}${UPCHECK_DATABASE_URL"} {
		text := "//127.0.0.9/:_authToken=x${" + name + "}"
		_, err := parse(t, "registry=http://127.0.0.1/\n"+text, env)
		bare := strings.TrimSuffix(name, "?")
		if i := strings.LastIndex(bare, "${"); i >= 0 {
			bare = bare[i+2:]
		}
		want := "site.npmrc line 2 (//127.0.0.9/:_authToken): upcheck replaces only NPM_TOKEN, NODE_AUTH_TOKEN and other NPM_* variables in the .npmrc, not ${" + bare + "}"
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v; want an error starting %q", text, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error %q shows a value", text, err)
		}
	}
	// A reference that is not a name is refused without quoting it.
	_, err = parse(t, "//127.0.0.9/:_authToken=${hunter2 token}", env)
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "no variable's name") {
		t.Errorf("a reference that is not a name: %v", err)
	}
}

func TestNoRegistryIsAnErrorThatNamesTheSettings(t *testing.T) {
	t.Parallel()
	regs, err := parse(t, "@acme:registry=http://127.0.0.1/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := regs.For("@acme/blog"); err != nil {
		t.Errorf("a scope with a registry: %v", err)
	}
	_, err = regs.For("blog")
	if err != ErrNoRegistry || !strings.Contains(err.Error(), "UPCHECK_NPM_REGISTRY") || !strings.Contains(err.Error(), "npm config get registry") {
		t.Errorf("For(blog) = %v; want ErrNoRegistry naming the settings", err)
	}
}

func TestTokenNeverPrints(t *testing.T) {
	t.Parallel()
	regs, err := parse(t, "//127.0.0.1/:_authToken=hunter2", nil)
	if err != nil {
		t.Fatal(err)
	}
	tok := regs.Token(mustURL(t, "http://127.0.0.1/blog"))
	var log strings.Builder
	slog.New(slog.NewTextHandler(&log, nil)).Info("x", "token", tok, "regs", regs)
	for _, s := range []string{fmt.Sprint(tok), fmt.Sprintf("%v %+v %#v %s", tok, tok, tok, tok), fmt.Sprintf("%+v %#v", regs, regs), log.String()} {
		if strings.Contains(s, "hunter2") {
			t.Errorf("the token shows in %q", s)
		}
	}
	if tok.Reveal() != "hunter2" {
		t.Errorf("Reveal() = %q", tok.Reveal())
	}
}

func TestLoadRegistries(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), ".npmrc")
	if err := os.WriteFile(path, []byte("registry=http://127.0.0.1:1/\n//127.0.0.2/:_authToken=t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	regs, err := LoadRegistries("http://127.0.0.2", path, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if regs.Default.String() != "http://127.0.0.2/" {
		t.Errorf("UPCHECK_NPM_REGISTRY does not win: default %s", regs.Default)
	}
	if regs.Token(mustURL(t, "http://127.0.0.2/blog")).Reveal() != "t" {
		t.Error("the file's token is lost")
	}
	if _, err := LoadRegistries("", filepath.Join(t.TempDir(), "none"), nil); err == nil || !strings.Contains(err.Error(), "UPCHECK_NPMRC") {
		t.Errorf("a missing file: %v", err)
	}
}

// A named pipe at UPCHECK_NPMRC (nothing writes to it) is refused at once
// instead of holding the command until something does.
func TestLoadRegistriesRefusesANamedPipe(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), ".npmrc")
	namedpipe.New(t, path)
	var err error
	wait.Returns(t, "reading a named pipe", func() { _, err = LoadRegistries("", path, func(string) string { return "" }) })
	if err == nil || !strings.Contains(err.Error(), "UPCHECK_NPMRC: "+path+" is not a regular file") {
		t.Errorf("%v", err)
	}
}
