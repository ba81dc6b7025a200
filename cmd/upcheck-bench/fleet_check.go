package main

import (
	"archive/zip"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/dev/npmreg"
	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// fleetAdvisory is the a-th advisory of the fleet: its id, its CVE alias
// ("" for none), its package, and the version range it names.
type fleetAdvisory struct {
	id, cve, pkg      string
	introduced, fixed string // "": every version, no fix
	malicious         bool
}

func fleetAdvisoryOf(a int) fleetAdvisory {
	if a%50 == 0 {
		return fleetAdvisory{id: fmt.Sprintf("MAL-2026-%d", 90000+a), pkg: fleetName(a), malicious: true}
	}
	v := a % fleetVersions
	return fleetAdvisory{id: fmt.Sprintf("GHSA-%04d-flet-bnch", a), cve: fmt.Sprintf("CVE-2026-%d", 50000+a), pkg: fleetName(a),
		introduced: fmt.Sprintf("1.0.%d", v), fixed: fmt.Sprintf("1.0.%d", v+1)}
}

// writeFleetArchive writes the fleet's fleetAdvisories OSV records as an
// OSV archive at path (osvgen.Record: the shapes of real records).
func writeFleetArchive(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	for a := range fleetAdvisories {
		adv := fleetAdvisoryOf(a)
		var rec []byte
		if adv.malicious {
			rec = osvgen.Record(adv.id, adv.pkg, osvgen.KindMalware, "", "")
		} else {
			rec = osvgen.Record(adv.id, adv.pkg, osvgen.KindVuln, adv.introduced, adv.fixed, adv.cve)
		}
		w, err := zw.Create(adv.id + ".json")
		if err == nil {
			_, err = w.Write(rec)
		}
		if err != nil {
			f.Close()
			return err
		}
	}
	err = zw.Close()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// fleetRegistry is the fleet's registry: the one fake registry
// (internal/dev/npmreg) serving every package an advisory names, at
// 0.9.0, the fleet's three versions and the one after them (each
// advisory's fix), on loopback, each answer after the same latency as the
// npm part's; it counts the package documents it answers, by package.
type fleetRegistry struct {
	reg *npmreg.Registry
	srv *http.Server
	url string

	mu     sync.Mutex
	counts map[string]int // document GETs by path
}

func startFleetRegistry() (*fleetRegistry, error) {
	reg, err := npmreg.New("/")
	if err != nil {
		return nil, err
	}
	reg.SetLatency(latency)
	published := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for a := range fleetAdvisories {
		versions := map[string]npmreg.Version{"0.9.0": {Published: published}}
		for v := range fleetVersions + 1 {
			versions[fmt.Sprintf("1.0.%d", v)] = npmreg.Version{Published: published.Add(time.Duration(v+1) * 24 * time.Hour)}
		}
		if err := reg.Publish(fleetName(a), fmt.Sprintf("1.0.%d", fleetVersions), versions); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &fleetRegistry{reg: reg, url: "http://" + ln.Addr().String(), counts: map[string]int{}}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

// ServeHTTP counts a package document's GET (not a tarball, not the
// keys) and lets the registry answer.
func (r *fleetRegistry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if p := req.URL.EscapedPath(); !strings.Contains(p, "/-/") {
		r.mu.Lock()
		r.counts[p]++
		r.mu.Unlock()
	}
	r.reg.ServeHTTP(w, req)
}

// take is the documents' GETs since the last take, by path, and starts
// anew.
func (r *fleetRegistry) take() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.counts
	r.counts = map[string]int{}
	return c
}

func (r *fleetRegistry) close() { r.srv.Close() }

// fleetCheck runs a check of the fleet by the real binary (`upcheck
// check`, with the registry as UPCHECK_NPM_REGISTRY): it evaluates every
// site's versions (each distinct version matched once), refreshes the
// sites' counts and decides what clears each site's findings, fetching
// the documents that needs. Reported: its duration and peak RSS (target
// < 300 MiB), the registry's document GETs: the most of any one package
// (target 1), the total, and the distinct packages the fleet's findings
// need a document of (those with a fixed version), against which the
// total is read; the check fetches at most updatecheck.MaxFixDocuments.
func fleetCheck(ctx context.Context, binary string, env []string, conn *pgx.Conn, reg *fleetRegistry) error {
	reg.take()
	res, rss, err := check(binary, env)
	if err != nil {
		return err
	}
	counts := reg.take()
	report("fleet_check_wall", float64(res.DurationMS)/1000, "s", "", nil)
	report("fleet_check_cpu", res.cpu.Seconds(), "s", "", nil)
	mib := float64(rss) / 1024
	report("fleet_check_peak_rss", mib, "MiB", "< 300", yes(mib < 300))
	var most, total int
	for _, n := range counts {
		most, total = max(most, n), total+n
	}
	// The fixes' documents needed beyond the components' own: a
	// component's package is read as its source, once, and the fix step
	// reads its document from there.
	var needed, matched, findings, sites, evaluated, sources int
	if err := conn.QueryRow(ctx, `
		SELECT (SELECT count(DISTINCT f.name) FROM tree_findings f
		        WHERE f.fixed_in IS NOT NULL AND NOT f.withdrawn
		          AND EXISTS (SELECT 1 FROM tree_packages p WHERE p.name = f.name AND p.version = f.version)
		          AND NOT EXISTS (SELECT 1 FROM components c WHERE c.source_url = 'npm:' || f.name)),
		       (SELECT count(*) FROM tree_matched),
		       (SELECT count(*) FROM tree_findings),
		       (SELECT count(*) FROM tree_state),
		       (SELECT count(*) FROM tree_state WHERE evaluated_hash = tree_hash),
		       (SELECT count(DISTINCT source_url) FROM components)`).Scan(&needed, &matched, &findings, &sites, &evaluated,
		&sources); err != nil {
		return err
	}
	if evaluated != sites || findings == 0 {
		return fmt.Errorf("the fleet check evaluated %d of %d sites and wrote %d findings", evaluated, sites, findings)
	}
	report("fleet_check_versions_matched", float64(matched), "versions", "", nil)
	report("fleet_check_findings", float64(findings), "findings", "", nil)
	report("fleet_check_fetches_per_package", float64(most), "GETs", "1", yes(most == 1))
	report("fleet_check_documents_fetched", float64(total), "GETs", "", nil)
	report("fleet_check_packages_needing", float64(needed), "packages", "", nil)
	report("fleet_check_component_sources", float64(sources), "packages", "", nil)
	// What one check may fetch: every component's package, and every
	// other package the fixes need, up to the cap.
	want := sources + min(needed, updatecheck.MaxFixDocuments)
	report("fleet_check_fetched_vs_needed", float64(total)/float64(max(want, 1)), "x sources + min(needed, cap)", "1", yes(total == want))
	return reportComponentCounts(ctx, conn)
}

// reportComponentCounts reports the fleet's counts of the sites'
// components after the check (fleet_site_components, refreshed at its
// end): every site's components read (target: every site), and their
// sums.
func reportComponentCounts(ctx context.Context, conn *pgx.Conn) error {
	var checked, components, updates, security, vulnerable, malicious, stale int
	if err := conn.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE k.checked), coalesce(sum(k.components), 0), coalesce(sum(k.updates), 0),
		       coalesce(sum(k.security), 0), coalesce(sum(k.vulnerable), 0), coalesce(sum(k.malicious), 0),
		       count(*) FILTER (WHERE k.refreshed_at < (SELECT max(started_at) FROM check_runs))
		FROM fleet_site_components k WHERE k.site_id > 1`).Scan(&checked, &components, &updates, &security, &vulnerable,
		&malicious, &stale); err != nil {
		return err
	}
	report("fleet_components", float64(components), "components", fmt.Sprint(fleetSites*fleetComponentsPerSite),
		yes(components == fleetSites*fleetComponentsPerSite))
	report("fleet_components_sites_checked", float64(checked), "sites", fmt.Sprint(fleetSites), yes(checked == fleetSites))
	report("fleet_components_sites_not_refreshed", float64(stale), "sites", "0", yes(stale == 0))
	report("fleet_components_updates", float64(updates), "components", "", nil)
	report("fleet_components_security", float64(security), "components", "", nil)
	report("fleet_components_vulnerable", float64(vulnerable), "components", "", nil)
	report("fleet_components_malicious", float64(malicious), "components", "", nil)
	return nil
}
