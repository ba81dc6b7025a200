package osvgen

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"time"
)

// KEVCatalog is a known-exploited vulnerabilities catalogue, in the
// fields of its published JSON schema.
type KEVCatalog struct {
	Released time.Time // dateReleased; catalogVersion is its date
	Entries  []KEVEntry
}

// KEVEntry is one vulnerability of the catalogue.
type KEVEntry struct {
	CVE              string
	VendorProject    string
	Product          string
	Name             string // vulnerabilityName
	DateAdded        time.Time
	ShortDescription string
	RequiredAction   string
	DueDate          time.Time
	RansomwareUse    string // knownRansomwareCampaignUse: "Known" or "Unknown"
	Notes            string
	CWEs             []string
}

type kevJSON struct {
	Title           string         `json:"title"`
	CatalogVersion  string         `json:"catalogVersion"`
	DateReleased    string         `json:"dateReleased"`
	Count           int            `json:"count"`
	Vulnerabilities []kevEntryJSON `json:"vulnerabilities"`
}

type kevEntryJSON struct {
	CveID                      string   `json:"cveID"`
	VendorProject              string   `json:"vendorProject"`
	Product                    string   `json:"product"`
	VulnerabilityName          string   `json:"vulnerabilityName"`
	DateAdded                  string   `json:"dateAdded"`
	ShortDescription           string   `json:"shortDescription"`
	RequiredAction             string   `json:"requiredAction"`
	DueDate                    string   `json:"dueDate"`
	KnownRansomwareCampaignUse string   `json:"knownRansomwareCampaignUse"`
	Notes                      string   `json:"notes"`
	Cwes                       []string `json:"cwes"`
}

// WriteKEV writes c as the catalogue's JSON: title, catalogVersion
// ("2026.11.20"), dateReleased, count and vulnerabilities, dates as
// "2006-01-02".
func WriteKEV(w io.Writer, c KEVCatalog) error {
	out := kevJSON{
		Title:          "CISA Catalog of Known Exploited Vulnerabilities",
		CatalogVersion: c.Released.UTC().Format("2006.01.02"),
		DateReleased:   c.Released.UTC().Format("2006-01-02T15:04:05.0000Z"),
		Count:          len(c.Entries), Vulnerabilities: []kevEntryJSON{},
	}
	for _, e := range c.Entries {
		cwes := e.CWEs
		if cwes == nil {
			cwes = []string{}
		}
		out.Vulnerabilities = append(out.Vulnerabilities, kevEntryJSON{
			CveID: e.CVE, VendorProject: e.VendorProject, Product: e.Product, VulnerabilityName: e.Name,
			DateAdded: e.DateAdded.Format(time.DateOnly), ShortDescription: e.ShortDescription,
			RequiredAction: e.RequiredAction, DueDate: e.DueDate.Format(time.DateOnly),
			KnownRansomwareCampaignUse: e.RansomwareUse, Notes: e.Notes, Cwes: cwes,
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "    ")
	return enc.Encode(out)
}

// KEVEntries are catalogue entries for cves, deterministic from seed:
// added before released, due three weeks after (as the catalogue sets
// for most entries), a few known to be used by ransomware campaigns.
func KEVEntries(cves []string, released time.Time, seed int64) []KEVEntry {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6b6576))
	var out []KEVEntry
	for _, cve := range cves {
		added := released.AddDate(0, 0, -rng.IntN(700)).UTC().Truncate(24 * time.Hour)
		ransom := "Unknown"
		if rng.IntN(6) == 0 {
			ransom = "Known"
		}
		out = append(out, KEVEntry{
			CVE: cve, VendorProject: "Open Source", Product: "npm package", Name: "Open Source npm package " + cve + " Vulnerability",
			DateAdded:        added,
			ShortDescription: "The package contains a vulnerability that allows a remote, unauthenticated attacker to execute code or read sensitive data.",
			RequiredAction:   "Apply mitigations per vendor instructions, follow applicable BOD 22-01 guidance for cloud services, or discontinue use of the product if mitigations are unavailable.",
			DueDate:          added.AddDate(0, 0, 21), RansomwareUse: ransom,
			Notes: "https://nvd.nist.gov/vuln/detail/" + cve, CWEs: []string{weaknesses[rng.IntN(len(weaknesses))].cwe},
		})
	}
	return out
}

// EPSSFile is a day's exploit-probability scores.
type EPSSFile struct {
	Model  string    // the model_version, "v2025.03.14"
	Date   time.Time // the score_date (its day)
	Scores []EPSSScore
}

// EPSSScore is a CVE's probability of exploitation and its percentile.
type EPSSScore struct {
	CVE        string
	EPSS       float64
	Percentile float64
}

// WriteEPSS writes f gzipped, as the daily CSV is published: a first line
// "#model_version:…,score_date:…T00:00:00+0000", the header
// "cve,epss,percentile", then one line per CVE with five decimals.
func WriteEPSS(w io.Writer, f EPSSFile) error {
	zw := gzip.NewWriter(w)
	fmt.Fprintf(zw, "#model_version:%s,score_date:%sT00:00:00+0000\ncve,epss,percentile\n", f.Model, f.Date.UTC().Format(time.DateOnly))
	for _, s := range f.Scores {
		fmt.Fprintf(zw, "%s,%s,%s\n", s.CVE, strconv.FormatFloat(s.EPSS, 'f', 5, 64), strconv.FormatFloat(s.Percentile, 'f', 5, 64))
	}
	return zw.Close()
}

// EPSSScores are scores for cves, deterministic from seed: most small, as
// the real distribution is, a few high; the percentile grows with the
// score.
func EPSSScores(cves []string, seed int64) []EPSSScore {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x65707373))
	var out []EPSSScore
	for _, cve := range cves {
		p := rng.Float64()
		score := 0.0004 + p*p*p*p*0.97
		out = append(out, EPSSScore{CVE: cve, EPSS: round5(score), Percentile: round5(0.05 + 0.95*p)})
	}
	return out
}

func round5(f float64) float64 { return float64(int64(f*100000+0.5)) / 100000 }
