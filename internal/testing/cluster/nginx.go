package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The production values of NginxSite that SiteConfig replaces, each with
// the number of times the site names it.
var (
	siteListen  = "listen 443 ssl;"
	siteCerts   = "/etc/ssl/upcheck/"
	siteLogs    = "/var/log/nginx/"
	sitePorts   = []string{"127.0.0.1:8081", "127.0.0.1:8082", "127.0.0.1:8083"}
	siteUpserve = "    server 127.0.0.1:8081 max_fails=0;\n"
)

// SiteConfig is site (NginxSite) moved to a cluster: nginx listens on
// https (host:port), the upstream holds one server line per instance
// address, in the form of the site's first one, and certificates and logs
// live in certDir and logDir. Every value it replaces must be in site as
// often as the guide's site has it, so the guide's block cannot drift from
// what runs.
func SiteConfig(site, https string, instances []string, certDir, logDir string) (string, error) {
	if len(instances) == 0 {
		return "", errors.New("no instance")
	}
	for _, want := range []struct {
		s string
		n int
	}{{siteListen, 1}, {siteCerts, 2}, {siteLogs, 1}, {siteUpserve, 1}} {
		if got := strings.Count(site, want.s); got != want.n {
			return "", fmt.Errorf("nginx site: %q appears %d times, want %d", want.s, got, want.n)
		}
	}
	// The upstream's servers: the first line's form for each instance.
	start := strings.Index(site, siteUpserve)
	end := start
	for _, p := range sitePorts {
		line := strings.Replace(siteUpserve, sitePorts[0], p, 1)
		if !strings.HasPrefix(site[end:], line) {
			return "", fmt.Errorf("nginx site: want the upstream's server lines for %s in order", strings.Join(sitePorts, ", "))
		}
		end += len(line)
	}
	var servers strings.Builder
	for _, a := range instances {
		servers.WriteString(strings.Replace(siteUpserve, sitePorts[0], a, 1))
	}
	site = site[:start] + servers.String() + site[end:]
	site = strings.Replace(site, siteListen, "listen "+https+" ssl;", 1)
	site = strings.ReplaceAll(site, siteCerts, strings.TrimSuffix(certDir, "/")+"/")
	site = strings.ReplaceAll(site, siteLogs, strings.TrimSuffix(logDir, "/")+"/")
	return site, nil
}

// mainConfig is nginx.conf for a cluster: what Debian's /etc/nginx/nginx.conf
// provides around a site, with every path under dir, in the foreground.
func mainConfig(dir string) string {
	user := ""
	if os.Geteuid() == 0 {
		// Workers would otherwise be nobody, who cannot enter dir.
		user = "user root;\n"
	}
	tmp := filepath.Join(dir, "tmp")
	return fmt.Sprintf(`daemon off;
%sworker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/log/error.log notice;
events { worker_connections 512; }
http {
    access_log off;
    client_body_temp_path %[3]s/body;
    proxy_temp_path %[3]s/proxy;
    fastcgi_temp_path %[3]s/fastcgi;
    uwsgi_temp_path %[3]s/uwsgi;
    scgi_temp_path %[3]s/scgi;
    include %[2]s/upcheck.conf;
}
`, user, dir, tmp)
}

// NginxBinary finds nginx: on PATH, then where Debian's package puts it.
func NginxBinary() (string, error) {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx", nil
	}
	return "", errors.New("nginx not found: install Debian's nginx package (make deps does, as root)")
}

// startNginx writes the configuration and certificate under the cluster's
// dir, starts nginx in the foreground and waits until it accepts
// connections.
func (c *Cluster) startNginx(ctx context.Context) error {
	bin, err := NginxBinary()
	if err != nil {
		return err
	}
	dir := c.opts.Dir
	for _, d := range []string{"tls", "log", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return err
		}
	}
	if c.CertPEM, err = ensureCertificate(filepath.Join(dir, "tls")); err != nil {
		return err
	}
	var addrs []string
	for _, in := range c.Instances {
		addrs = append(addrs, in.Addr())
	}
	site, err := SiteConfig(NginxSite, c.opts.HTTPS, addrs, filepath.Join(dir, "tls"), filepath.Join(dir, "log"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "upcheck.conf"), []byte(site), 0o600); err != nil {
		return err
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(mainConfig(dir)), 0o600); err != nil {
		return err
	}
	// -e: the error log before the configuration is read, which would
	// otherwise be /var/log/nginx/error.log.
	errLog := filepath.Join(dir, "log", "error.log")
	if out, err := exec.CommandContext(ctx, bin, "-t", "-q", "-e", errLog, "-p", dir, "-c", conf).CombinedOutput(); err != nil {
		return fmt.Errorf("nginx -t: %v\n%s", err, out)
	}
	out := &buffer{}
	cmd := exec.Command(bin, "-e", errLog, "-p", dir, "-c", conf)
	cmd.Stdout, cmd.Stderr = out, out
	if c.nginx, err = startProcess(cmd); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", c.opts.HTTPS, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		if err := c.nginx.waitOrTick(ctx, deadline); err != nil {
			return fmt.Errorf("nginx did not listen on %s: %w\n%s%s", c.opts.HTTPS, err, out.String(), c.NginxLog())
		}
	}
}

// ensureCertificate returns the self-signed certificate for 127.0.0.1 and
// localhost in dir (fullchain.pem, privkey.pem), made the first time.
func ensureCertificate(dir string) ([]byte, error) {
	certPath, keyPath := filepath.Join(dir, "fullchain.pem"), filepath.Join(dir, "privkey.pem")
	if b, err := os.ReadFile(certPath); err == nil {
		if blk, _ := pem.Decode(b); blk != nil {
			if cert, err := x509.ParseCertificate(blk.Bytes); err == nil && time.Now().Before(cert.NotAfter.Add(-24*time.Hour)) {
				if _, err := os.Stat(keyPath); err == nil {
					return b, nil
				}
			}
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "upcheck cluster (self-signed)"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(90 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(certPath, certPEM, 0o644); err != nil {
		return nil, err
	}
	return certPEM, nil
}
