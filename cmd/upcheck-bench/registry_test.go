package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/dev/npmreg"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/npm"
)

// The registry speaks the registry's protocol: the full document decodes
// as npm's client decodes it, lists the installed version (deprecated for
// some packages), and every version is signed by the key it publishes;
// gzip only to a client that accepts it; 304 on the ETag; and the bare
// fetcher reads every document whole, decompressed.
func TestRegistry(t *testing.T) {
	t.Parallel()
	reg, err := startRegistry(60) // the core, a 5 MB one, scoped and unscoped, deprecated ones
	if err != nil {
		t.Fatal(err)
	}
	defer reg.close()

	// The manifest: every package at its installed version, as an npm
	// source the registry serves, the core's package the core.
	m, err := manifest.ParseJSON(reg.manifest())
	if err != nil {
		t.Fatal(err)
	}
	regs, err := npm.LoadRegistries(reg.url, "", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckRegistries(regs); err != nil {
		t.Fatal(err)
	}
	if core, ok := m.Core(); !ok || core.Source != "npm:"+npmreg.SizedCore {
		t.Errorf("core %+v, want the component of npm:%s", core, npmreg.SizedCore)
	}
	if len(m.Components) != len(reg.docs) {
		t.Fatalf("%d components for %d packages", len(m.Components), len(reg.docs))
	}
	behind := 0
	for i, c := range m.Components {
		d := reg.docs[i]
		if c.Source != "npm:"+d.Name || c.Version != d.Installed {
			t.Errorf("component %d: %s at %s, want npm:%s at %s", i, c.Source, c.Version, d.Name, d.Installed)
		}
		if d.Installed != d.Latest {
			behind++
		}
	}
	if behind < len(reg.docs)*3/4 {
		t.Errorf("%d of %d components have an update; want most", behind, len(reg.docs))
	}

	resp, err := http.Get(reg.url + "/-/npm/v1/keys")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := npm.ParseKeys(resp.Body)
	resp.Body.Close()
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys: %v %v", keys, err)
	}

	deprecated := 0
	for i, d := range reg.docs {
		if i%7 != 0 && i != 25 { // the core, the 5 MB one, and a spread
			continue
		}
		name := npm.Name(d.Name)
		req, _ := http.NewRequest("GET", reg.url+"/"+name.PathSegment(), nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s: %d, encoding %q", name, resp.StatusCode, resp.Header.Get("Content-Encoding"))
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		pkg, err := npm.DecodePackage(zr, npm.DefaultMaxDocument)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if pkg.Name != d.Name || pkg.DistTags["latest"] != d.Latest {
			t.Errorf("%s: name %q, latest %q, want %q", name, pkg.Name, pkg.DistTags["latest"], d.Latest)
		}
		inst, ok := pkg.Versions[d.Installed]
		if !ok {
			t.Fatalf("%s: the installed %s is not listed", name, d.Installed)
		}
		if inst.Deprecated != "" {
			deprecated++
		}
		for v, ver := range pkg.Versions {
			if _, err := npm.VerifySignature(keys, d.Name, v, ver, pkg.Published[v]); err != nil {
				t.Fatalf("%s@%s: %v", name, v, err)
			}
		}
		if i == 25 && d.Raw < npmreg.SizedBig {
			t.Errorf("%s: %d bytes, want 5 MB", name, d.Raw)
		}

		// Without Accept-Encoding: the same document, plain.
		req, _ = http.NewRequest("GET", reg.url+"/"+d.Name, nil)
		resp, err = http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.Header.Get("Content-Encoding") != "" || len(plain) != d.Raw || !strings.HasPrefix(string(plain), `{"_id":`) {
			t.Errorf("%s plain: encoding %q, %d bytes, want %d", name, resp.Header.Get("Content-Encoding"), len(plain), d.Raw)
		}

		req, _ = http.NewRequest("GET", reg.url+"/"+name.PathSegment(), nil)
		req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("%s with its ETag: %d, want 304", name, resp.StatusCode)
		}
	}
	if deprecated == 0 {
		t.Error("no installed version is deprecated")
	}

	reg.SentBytes.Swap(0)
	if _, err := npmBareFetch(context.Background(), reg, "npm_"); err != nil {
		t.Fatal(err)
	}
	var raw, gz int64
	for _, d := range reg.docs {
		raw, gz = raw+int64(d.Raw), gz+int64(len(d.Gzipped))
	}
	if got := reg.SentBytes.Load(); got != gz {
		t.Errorf("the bare fetcher was sent %d bytes, want every document gzipped (%d)", got, gz)
	}
	if f := figures[len(figures)-1]; f.name != "npm_bare_decoded_bytes" || int64(f.value*(1<<20)+0.5) != raw {
		t.Errorf("the bare fetcher read %+v, want %d bytes decoded", f, raw)
	}

	// Plain: every document uncompressed, to a client that accepts gzip too.
	reg.Plain.Store(true)
	d := reg.docs[25]
	req, _ := http.NewRequest("GET", reg.url+"/"+npm.Name(d.Name).PathSegment(), nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err = http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "" || len(plain) != d.Raw {
		t.Errorf("%s plain, gzip accepted: encoding %q, %d bytes, want %d", d.Name, resp.Header.Get("Content-Encoding"), len(plain), d.Raw)
	}
	reg.SentBytes.Swap(0)
	if _, err := npmBareFetch(context.Background(), reg, "npm_plain_"); err != nil {
		t.Fatal(err)
	}
	if got := reg.SentBytes.Load(); got != raw {
		t.Errorf("the bare fetcher was sent %d bytes plain, want every document uncompressed (%d)", got, raw)
	}
}
