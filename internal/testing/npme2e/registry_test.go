package npme2e

import (
	"context"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/testkit"
	"github.com/upcheck/upcheck/internal/testing/verdaccio"
)

// One registry for every scenario: each publishes packages of its own, so
// that they run in parallel and none sees another's.
func TestAgainstVerdaccio(t *testing.T) {
	t.Parallel()
	reg := verdaccio.Start(t)
	publisher := reg.AddUser(t, "publisher")
	for _, sc := range []struct {
		name string
		run  func(*testing.T, *verdaccio.Registry, string)
	}{
		{"UpdateFoundThenNotModified", updateFoundThenNotModified},
		{"DistTagsDecideTheTarget", distTags},
		{"Deprecation", deprecation},
		{"RequiredCoreFromPeerDependencies", requiredCore},
		{"MissingPackage", missingPackage},
		{"PrivatePackageWithToken", privatePackage},
		{"HangingRegistryLeaseLost", hangingRegistry},
		{"LockfileSync", lockfileSync},
		{"OutOfBandUpgradeServe", outOfBandUpgrade},
		{"WhatAnUpdateBrings", whatAnUpdateBrings},
	} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			sc.run(t, reg, publisher)
		})
	}
}

// publish publishes each version of name, in order, as the publisher.
func publish(t *testing.T, reg *verdaccio.Registry, token, name string, versions ...string) {
	t.Helper()
	for _, v := range versions {
		reg.Publish(t, token, verdaccio.Package{Name: name, Version: v})
	}
}

// 1 and 2: a package with a newer latest is an update whose command is
// npm's; the next check gets 304 from the registry and says so.
func updateFoundThenNotModified(t *testing.T, reg *verdaccio.Registry, token string) {
	publish(t, reg, token, "e2e-blog", "1.0.0", "1.1.0")
	s := newSite(t, map[string]string{"UPCHECK_NPM_REGISTRY": reg.URL})
	s.sync(`{"components": [
	  {"code": "core", "name": "Core", "version": "1.0.0"},
	  {"code": "blog", "name": "Blog", "version": "1.0.0", "source": "npm:e2e-blog"}]}`)

	line, code := s.check()
	if code != 0 || line.Status != "completed" || line.Fetched != 1 || line.NotModified != 0 || line.Failed != 0 {
		t.Fatalf("first check: exit %d, %s; want completed, fetched 1", code, line.raw)
	}
	// Verdaccio publishes no signing keys: its source counts as unsigned.
	if line.Summary == nil || line.Summary.UpdatesAvailable != 1 || line.Summary.UnsignedSources != 1 {
		t.Fatalf("first check's summary: %s; want one update, one unsigned source", line.raw)
	}
	want := func(when string) {
		t.Helper()
		r := s.row("blog")
		if !r.Evaluated || !r.UpdateAvailable || r.UpdateVersion != "1.1.0" || r.Latest != "1.1.0" ||
			r.UpdateCommand != "npm install e2e-blog@1.1.0" || r.SourceKind != readmodel.SourceNpm || r.Package != "e2e-blog" {
			t.Fatalf("%s: blog = %s; want the update 1.1.0 with its npm command", when, rowJSON(r))
		}
		if d := s.detail("blog"); d.UpdateCommand != "npm install e2e-blog@1.1.0" || d.Registry == nil || d.Registry.Package != "e2e-blog" ||
			d.Registry.Registry != reg.URL || d.Registry.KeysPublished || len(d.Registry.Versions) != 2 {
			t.Fatalf("%s: blog's detail: command %q, registry facts %s", when, d.UpdateCommand, rowJSON(d.Registry))
		}
	}
	want("after the first check")

	line, code = s.check()
	if code != 0 || line.Status != "completed" || line.NotModified != 1 || line.Fetched != 0 || line.Failed != 0 {
		t.Fatalf("second check: exit %d, %s; want completed with not_modified 1", code, line.raw)
	}
	want("after a 304")

	// The API says the same, in its own names.
	type item struct {
		Code          string  `json:"code"`
		SourceKind    *string `json:"source_kind"`
		Package       *string `json:"package"`
		UpdateCommand *string `json:"update_command"`
		Deprecated    *string `json:"deprecated"`
		Registry      *struct {
			Package  string `json:"package"`
			Registry string `json:"registry"`
		} `json:"registry"`
	}
	text := func(p *string) string {
		if p == nil {
			return "null"
		}
		return *p
	}
	a := s.serveAPI()
	var cat struct{ Components []item }
	a.get("/api/admin/plugins/updates", &cat)
	var blog *item
	for i := range cat.Components {
		if cat.Components[i].Code == "blog" {
			blog = &cat.Components[i]
		}
	}
	if blog == nil || text(blog.SourceKind) != "npm" || text(blog.Package) != "e2e-blog" ||
		text(blog.UpdateCommand) != "npm install e2e-blog@1.1.0" || blog.Deprecated != nil {
		t.Fatalf("the catalog API's blog: %s", rowJSON(blog))
	}
	var detail item
	a.get("/api/admin/plugins/blog", &detail)
	if text(detail.UpdateCommand) != "npm install e2e-blog@1.1.0" || detail.Registry == nil ||
		detail.Registry.Package != "e2e-blog" || detail.Registry.Registry != reg.URL {
		t.Fatalf("the detail API's blog: %s", rowJSON(detail))
	}
	var health struct {
		Sources []struct {
			URL        string  `json:"url"`
			SourceKind string  `json:"source_kind"`
			Package    *string `json:"package"`
			Registry   *string `json:"registry"`
		}
	}
	a.get("/api/admin/sources", &health)
	if len(health.Sources) != 1 || health.Sources[0].URL != "npm:e2e-blog" || health.Sources[0].SourceKind != "npm" ||
		text(health.Sources[0].Package) != "e2e-blog" || text(health.Sources[0].Registry) != reg.URL {
		t.Fatalf("source health: %s", rowJSON(health))
	}
}

// The target is dist-tags.latest, as npm installs it: a version under
// another tag is not offered until `npm dist-tag` makes it latest (and the
// next check fetches the changed document); an installed prerelease
// follows its own line's tag.
func distTags(t *testing.T, reg *verdaccio.Registry, token string) {
	publish(t, reg, token, "e2e-tags", "1.0.0", "1.1.0")
	reg.Publish(t, token, verdaccio.Package{Name: "e2e-tags", Version: "2.0.0", Tag: "next"})
	publish(t, reg, token, "e2e-pre", "1.0.0")
	reg.Publish(t, token, verdaccio.Package{Name: "e2e-pre", Version: "1.1.0-beta.1", Tag: "beta"})
	reg.Publish(t, token, verdaccio.Package{Name: "e2e-pre", Version: "1.1.0-beta.2", Tag: "beta"})
	s := newSite(t, map[string]string{"UPCHECK_NPM_REGISTRY": reg.URL})
	s.sync(`{"components": [
	  {"code": "core", "name": "Core", "version": "1.0.0"},
	  {"code": "tags", "name": "Tags", "version": "1.0.0", "source": "npm:e2e-tags"},
	  {"code": "pre", "name": "Pre", "version": "1.1.0-beta.1", "source": "npm:e2e-pre"}]}`)
	if line, code := s.check(); code != 0 || line.Fetched != 2 {
		t.Fatalf("check: exit %d, %s", code, line.raw)
	}
	if r := s.row("tags"); r.UpdateVersion != "1.1.0" || r.Latest != "1.1.0" {
		t.Fatalf("tags = %s; want latest's 1.1.0, not next's 2.0.0", rowJSON(r))
	}
	if r := s.row("pre"); r.UpdateVersion != "1.1.0-beta.2" {
		t.Fatalf("pre = %s; want its line's 1.1.0-beta.2", rowJSON(r))
	}

	reg.DistTag(t, token, "e2e-tags@2.0.0", "latest")
	line, code := s.check()
	if code != 0 || line.Fetched != 1 || line.NotModified != 1 {
		t.Fatalf("check after the retag: exit %d, %s; want e2e-tags fetched again, e2e-pre not modified", code, line.raw)
	}
	if r := s.row("tags"); r.UpdateVersion != "2.0.0" || r.UpdateCommand != "npm install e2e-tags@2.0.0" {
		t.Fatalf("tags after the retag = %s; want 2.0.0", rowJSON(r))
	}
}

// 3: a deprecated installed version is shown with its publisher's message
// and queued as a notification; a deprecated newer version is never
// offered.
func deprecation(t *testing.T, reg *verdaccio.Registry, token string) {
	const message = "Use e2e-forms 1.1.0: 1.0.0 loses submissions <b>&</b>"
	publish(t, reg, token, "e2e-forms", "1.0.0", "1.1.0")
	reg.Deprecate(t, token, "e2e-forms@1.0.0", message)
	publish(t, reg, token, "e2e-tables", "1.0.0", "1.1.0")
	reg.Deprecate(t, token, "e2e-tables@1.1.0", "broken")

	s := newSite(t, map[string]string{"UPCHECK_NPM_REGISTRY": reg.URL})
	if out, code := s.run("notify", "add", "webhook", "--url", "https://hooks.example/upcheck", "--events", "all"); code != 0 {
		t.Fatalf("notify add: exit %d: %s", code, out)
	}
	s.sync(`{"components": [
	  {"code": "core", "name": "Core", "version": "1.0.0"},
	  {"code": "forms", "name": "Forms", "version": "1.0.0", "source": "npm:e2e-forms"},
	  {"code": "tables", "name": "Tables", "version": "1.0.0", "source": "npm:e2e-tables"}]}`)
	line, code := s.check()
	if code != 0 || line.Status != "completed" || line.Fetched != 2 {
		t.Fatalf("check: exit %d, %s", code, line.raw)
	}
	if r := s.row("forms"); r.Deprecated != message || r.UpdateVersion != "1.1.0" {
		t.Fatalf("forms = %s; want deprecated %q and the update 1.1.0", rowJSON(r), message)
	}
	if r := s.row("tables"); r.Deprecated != "" || r.UpdateAvailable || r.UpdateVersion != "" {
		t.Fatalf("tables = %s; want no update: its 1.1.0 is deprecated", rowJSON(r))
	}
	sum := line.Summary
	if sum == nil || sum.Deprecated != 1 {
		t.Fatalf("summary: %s; want deprecated 1", line.raw)
	}
	found := false
	for _, a := range sum.Attention {
		if a.Code == "forms" {
			found = a.Kind == readmodel.KindDeprecated && a.Deprecated != nil && *a.Deprecated == message
		}
	}
	if !found {
		t.Fatalf("attention: %s; want forms, deprecated with its message", rowJSON(sum.Attention))
	}
	var events []string
	rows, err := s.db.Pool.Query(context.Background(),
		"SELECT channel_id || ' ' || (strpos(payload::text, $1) > 0) FROM notification_events WHERE type = $2",
		message, string(readmodel.EventDeprecated))
	if err == nil {
		events, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil || len(events) != 1 || events[0] != "1 true" {
		t.Fatalf("deprecated events (channel, has the message): %q %v; want one for channel 1 with the message", events, err)
	}
	var cat struct {
		Components []struct {
			Code       string  `json:"code"`
			Deprecated *string `json:"deprecated"`
		}
	}
	s.serveAPI().get("/api/admin/plugins/updates", &cat)
	for _, c := range cat.Components {
		if c.Code == "forms" && (c.Deprecated == nil || *c.Deprecated != message) {
			t.Fatalf("the catalog API's forms: deprecated %s, want %q", rowJSON(c.Deprecated), message)
		}
	}
}

// 4: a release whose peerDependencies need a newer core than the installed
// one is not installable, and says which core it needs.
func requiredCore(t *testing.T, reg *verdaccio.Registry, token string) {
	publish(t, reg, token, "@e2e/core", "2.0.0", "3.0.0")
	reg.Publish(t, token, verdaccio.Package{Name: "@e2e/gallery", Version: "1.0.0", PeerDependencies: map[string]string{"@e2e/core": ">=2"}})
	reg.Publish(t, token, verdaccio.Package{Name: "@e2e/gallery", Version: "2.0.0", PeerDependencies: map[string]string{"@e2e/core": ">=3"}})
	s := newSite(t, map[string]string{"UPCHECK_NPM_REGISTRY": reg.URL})
	s.sync(`{"components": [
	  {"code": "core", "name": "Core", "version": "2.0.0", "source": "npm:@e2e/core"},
	  {"code": "gallery", "name": "Gallery", "version": "1.0.0", "source": "npm:@e2e/gallery"}]}`)
	if line, code := s.check(); code != 0 || line.Fetched != 2 {
		t.Fatalf("check: exit %d, %s", code, line.raw)
	}
	if r := s.row("gallery"); !r.NeedsNewerCore || r.RequiredCore != ">=3" || r.UpdateAvailable || r.Latest != "2.0.0" {
		t.Fatalf("gallery = %s; want 2.0.0 needing core >=3, not installable", rowJSON(r))
	}
	if r := s.row("core"); r.UpdateVersion != "3.0.0" || r.UpdateCommand != "npm install @e2e/core@3.0.0" {
		t.Fatalf("core = %s; want the update 3.0.0", rowJSON(r))
	}
}

// 5: a package the registry does not have is a failure of its own kind,
// said in words.
func missingPackage(t *testing.T, reg *verdaccio.Registry, _ string) {
	s := newSite(t, map[string]string{"UPCHECK_NPM_REGISTRY": reg.URL})
	s.sync(`{"components": [
	  {"code": "core", "name": "Core", "version": "1.0.0"},
	  {"code": "ghost", "name": "Ghost", "version": "1.0.0", "source": "npm:e2e-never-published"}]}`)
	line, code := s.check()
	if code != 7 || line.Status != "completed_with_failures" || line.Failed != 1 {
		t.Fatalf("check: exit %d, %s; want completed_with_failures, exit 7", code, line.raw)
	}
	want := readmodel.ProblemSentence(string(readmodel.ErrorNoSuchPackage), readmodel.FailureArgs{})
	if len(line.Failures) != 1 || line.Failures[0].Source != "npm:e2e-never-published" ||
		line.Failures[0].Kind != string(readmodel.ErrorNoSuchPackage) || line.Failures[0].Message != want {
		t.Fatalf("failures: %s; want no_such_package: %s", line.raw, want)
	}
	if r := s.row("ghost"); r.LastErrorKind != string(readmodel.ErrorNoSuchPackage) || !r.Failing {
		t.Fatalf("ghost = %s; want failing with no_such_package", rowJSON(r))
	}
}

// 6: a private package is read with the token of the site's .npmrc, and
// the token is nowhere in what the processes print (at DEBUG) nor in the
// database. Without the token the registry refuses, in words.
func privatePackage(t *testing.T, reg *verdaccio.Registry, token string) {
	publish(t, reg, token, "@private/e2e-billing", "1.0.0", "1.2.0")
	reader := reg.AddUser(t, "site-reader")
	manifest := `{"components": [
	  {"code": "core", "name": "Core", "version": "1.0.0"},
	  {"code": "billing", "name": "Billing", "version": "1.0.0", "source": "npm:@private/e2e-billing"}]}`

	s := newSite(t, map[string]string{"UPCHECK_NPMRC": reg.Npmrc(t, reader), "UPCHECK_LOG_LEVEL": "DEBUG"})
	s.sync(manifest)
	p := s.start("check")
	if code := p.wait(2 * time.Minute); code != 0 {
		t.Fatalf("check with the token: exit %d: %s", code, p.stdout.String())
	}
	if r := s.row("billing"); r.UpdateVersion != "1.2.0" {
		t.Fatalf("billing = %s; want the update 1.2.0, read with the token", rowJSON(r))
	}
	if !strings.Contains(p.stderr.String(), "update check started") {
		t.Fatalf("no DEBUG log on stderr: %q", p.stderr.String())
	}
	for _, tok := range []string{reader, token} {
		for what, text := range s.printed() { // the sync's and the check's, at DEBUG
			if strings.Contains(text, tok) {
				t.Errorf("a registry token is in what %s printed", what)
			}
		}
		if where := s.tablesHolding(tok); len(where) > 0 {
			t.Errorf("a registry token is stored in %v", where)
		}
	}

	// Without the token: credentials refused, in the words of Source health.
	anon := newSite(t, map[string]string{"UPCHECK_NPM_REGISTRY": reg.URL})
	anon.sync(manifest)
	line, code := anon.check()
	if code != 7 || len(line.Failures) != 1 || line.Failures[0].Kind != string(readmodel.ErrorCredentialsRefused) {
		t.Fatalf("check without the token: exit %d, %s; want credentials_refused", code, line.raw)
	}
	if m := line.Failures[0].Message; m != readmodel.ProblemSentence("credentials_refused", readmodel.FailureArgs{Status: 401}) &&
		m != readmodel.ProblemSentence("credentials_refused", readmodel.FailureArgs{Status: 403}) {
		t.Fatalf("credentials refused said as %q", m)
	}
}

// tablesHolding names the tables (of every schema upcheck and River use)
// one of whose rows holds text, read as text or as the hex of bytea.
func (s *site) tablesHolding(text string) []string {
	s.t.Helper()
	ctx := context.Background()
	rows, err := s.db.Pool.Query(ctx, `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) FROM information_schema.tables
		WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`)
	if err != nil {
		s.t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) < 10 {
		s.t.Fatalf("tables: %v %v", tables, err)
	}
	var holding []string
	for _, table := range tables {
		var n int
		err := s.db.Pool.QueryRow(ctx, "SELECT count(*) FROM "+table+" t WHERE strpos(t::text, $1) > 0 OR strpos(t::text, $2) > 0",
			text, hex.EncodeToString([]byte(text))).Scan(&n)
		if err != nil {
			s.t.Fatalf("%s: %v", table, err)
		}
		if n > 0 {
			holding = append(holding, table)
		}
	}
	return holding
}

// 7: a registry that accepts and never answers: the lease is lost while
// the request hangs, the check ends lease_lost, its request is cancelled,
// and nothing is written for the package.
func hangingRegistry(t *testing.T, reg *verdaccio.Registry, _ string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	accepted, closed := make(chan struct{}, 16), make(chan struct{}, 16)
	var received testkit.Buffer // what the hanging registry was sent
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			go func() { // read whatever comes, answer nothing, until the client hangs up
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					received.Write(buf[:n])
					if err != nil {
						c.Close()
						closed <- struct{}{}
						return
					}
				}
			}()
		}
	}()
	// The site has a token for Verdaccio, on the same address but another
	// port: it must not go to the hanging registry.
	verdaccioToken := reg.AddUser(t, "hang-site")
	npmrc := filepath.Join(t.TempDir(), "npmrc")
	rc := "registry=" + reg.URL + "\n@hang:registry=http://" + l.Addr().String() + "/\n" +
		"//" + strings.TrimPrefix(reg.URL, "http://") + ":_authToken=" + verdaccioToken + "\n"
	if err := os.WriteFile(npmrc, []byte(rc), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newSite(t, map[string]string{"UPCHECK_NPMRC": npmrc, "UPCHECK_FETCH_TIMEOUT": "5m"})
	s.sync(`{"components": [
	  {"code": "core", "name": "Core", "version": "1.0.0"},
	  {"code": "stalled", "name": "Stalled", "version": "1.0.0", "source": "npm:@hang/stalled"}]}`)
	p := s.start("check")
	select {
	case <-accepted:
	case <-p.done:
		t.Fatalf("check ended before it reached the hanging registry: exit %d: %s", p.code, p.stdout.String())
	case <-time.After(time.Minute):
		t.Fatal("the check never reached the hanging registry")
	}

	// Another instance takes the lease, as if this one had frozen.
	s.db.MustExec(t, "UPDATE core_update_lock SET expires_at = clock_timestamp() - interval '1 second' WHERE owner IS NOT NULL")
	other, err := lease.New(store.New(s.db.Pool), lease.DefaultTimings())
	if err != nil {
		t.Fatal(err)
	}
	if a, err := other.Acquire(context.Background(), lease.Operator); err != nil || a.Outcome != lease.Acquired {
		t.Fatalf("takeover: %+v %v", a, err)
	}
	if code := p.wait(serveWait); code != 5 {
		t.Fatalf("check that lost its lease: exit %d, want 5: %s", code, p.stdout.String())
	}
	if line := parseLine(t, p.stdout.String()); line.Status != "lease_lost" || line.Fetched != 0 || line.Failed != 0 {
		t.Fatalf("check that lost its lease: %s; want lease_lost, nothing fetched or failed", line.raw)
	}
	select {
	case <-closed:
	case <-time.After(serveWait):
		t.Fatal("the hanging request was not cancelled")
	}
	if got := received.String(); !strings.HasPrefix(got, "GET /@hang%2fstalled ") || strings.Contains(strings.ToLower(got), "authorization") ||
		strings.Contains(got, verdaccioToken) {
		t.Fatalf("the hanging registry was sent %q: want the package's GET without another registry's token",
			strings.ReplaceAll(got, verdaccioToken, "[Verdaccio's token]"))
	}
	var written int
	s.db.QueryRow(t, `SELECT (SELECT count(*) FROM sources) + (SELECT count(*) FROM component_results)`).Scan(&written)
	if written != 0 {
		t.Fatalf("%d source and result rows written by a check that lost its lease", written)
	}
	if r := s.row("stalled"); r.Evaluated || r.LastAttemptAt != nil {
		t.Fatalf("stalled = %s; want nothing known of it", rowJSON(r))
	}
}
