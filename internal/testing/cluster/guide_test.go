package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fenced returns the guide's code blocks with the given info string.
func fenced(t *testing.T, lang string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?ms)^```"+lang+"\n(.*?)^```$").FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

// The guide shows the files the cluster runs, byte for byte.
func TestGuideShowsTheFilesTheClusterRuns(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ lang, name, file string }{
		{"nginx", "deploy/upcheck.nginx.conf", NginxSite},
		{"ini", "deploy/upcheck@.service", SystemdUnit},
	} {
		blocks := fenced(t, c.lang)
		if len(blocks) != 1 {
			t.Fatalf("docs/deploy.md has %d ```%s blocks, want 1 (%s)", len(blocks), c.lang, c.name)
		}
		if blocks[0] != c.file {
			t.Errorf("docs/deploy.md's ```%s block is not internal/testing/cluster/%s: copy the file into the guide", c.lang, c.name)
		}
	}
}

// SiteConfig moves the guide's site to a cluster's ports and folders and
// changes nothing else; a site that lacks what it replaces is refused.
func TestSiteConfig(t *testing.T) {
	t.Parallel()
	got, err := SiteConfig(NginxSite, "127.0.0.1:9443", []string{"127.0.0.1:9001", "127.0.0.1:9002"}, "/tmp/c/tls", "/tmp/c/log/")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"    server 127.0.0.1:9001 max_fails=0;\n    server 127.0.0.1:9002 max_fails=0;\n    #",
		"listen 127.0.0.1:9443 ssl;",
		"ssl_certificate     /tmp/c/tls/fullchain.pem;",
		"ssl_certificate_key /tmp/c/tls/privkey.pem;",
		"access_log /tmp/c/log/upcheck.access.log upcheck;",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("site lacks %q:\n%s", want, got)
		}
	}
	for _, gone := range []string{"8081 ", "8082 ", "8083 ", "listen 443", "/etc/ssl", "/var/log"} {
		if strings.Contains(got, gone) {
			t.Errorf("site still has %q:\n%s", gone, got)
		}
	}
	// Apart from those lines, the site is the guide's.
	strip := func(s string) string {
		var keep []string
		for line := range strings.SplitSeq(s, "\n") {
			if !regexp.MustCompile(`^\s*(server 127|listen |ssl_certificate|access_log )`).MatchString(line) {
				keep = append(keep, line)
			}
		}
		return strings.Join(keep, "\n")
	}
	if strip(got) != strip(NginxSite) {
		t.Errorf("SiteConfig changed more than ports and paths:\n%s", got)
	}
	for i, bad := range []string{
		strings.Replace(NginxSite, "listen 443 ssl;", "listen 443 ssl http2;", 1),
		strings.Replace(NginxSite, "/var/log/nginx/", "/srv/log/", 1),
		strings.Replace(NginxSite, "server 127.0.0.1:8082", "server 127.0.0.1:8084", 1),
	} {
		if _, err := SiteConfig(bad, "127.0.0.1:9443", []string{"127.0.0.1:9001"}, "/c", "/l"); err == nil {
			t.Errorf("site %d, which SiteConfig cannot move, was accepted", i)
		}
	}
}

// The guide's unit is one systemd accepts, and stays hardened: its
// exposure rating (systemd-analyze security) is 2.0 or below. Only
// ExecStart's path is changed, to an executable that exists.
func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatal("systemd-analyze not found: install Debian's systemd package (make deps does, as root)")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(SystemdUnit, "ExecStart=/usr/local/bin/upcheck serve\n") {
		t.Fatal("the unit's ExecStart is not /usr/local/bin/upcheck serve")
	}
	unit := filepath.Join(t.TempDir(), "upcheck@8081.service")
	if err := os.WriteFile(unit, []byte(strings.Replace(SystemdUnit, "/usr/local/bin/upcheck", self, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "verify", "--man=no", unit).CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "security", "--offline=true", "--threshold=20", "--no-pager", unit).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze security: %v (the unit is rated above 2.0)\n%s", err, out)
	}
	if !strings.Contains(string(out), "Overall exposure level for upcheck@8081.service") {
		t.Fatalf("systemd-analyze security said:\n%s", out)
	}
}
