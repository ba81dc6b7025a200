package feed

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
)

// cvePattern is a CVE id as the KEV schema states it: the number has four
// to nineteen digits.
var cvePattern = regexp.MustCompile(`^CVE-[0-9]{4}-[0-9]{4,19}$`)

// KEVCatalog is the Known Exploited Vulnerabilities catalogue.
type KEVCatalog struct {
	// Version is catalogVersion, "2025.02.25".
	Version string
	// Released is dateReleased; zero when absent or unreadable.
	Released time.Time
	// Entries are the valid entries, in the catalogue's order.
	Entries []KEVEntry
}

// KEVEntry is one known-exploited vulnerability.
type KEVEntry struct {
	CVE, Vendor, Product, Name, Description, RequiredAction string
	// Ransomware is knownRansomwareCampaignUse: "Known" or "Unknown".
	Ransomware string
	Notes      string
	// DateAdded and DueDate are dates, at UTC midnight.
	DateAdded, DueDate time.Time
}

type kevFile struct {
	CatalogVersion  string          `json:"catalogVersion"`
	DateReleased    string          `json:"dateReleased"`
	Vulnerabilities json.RawMessage `json:"vulnerabilities"`
}

type kevRaw struct {
	CVEID             string `json:"cveID"`
	VendorProject     string `json:"vendorProject"`
	Product           string `json:"product"`
	VulnerabilityName string `json:"vulnerabilityName"`
	DateAdded         string `json:"dateAdded"`
	ShortDescription  string `json:"shortDescription"`
	RequiredAction    string `json:"requiredAction"`
	DueDate           string `json:"dueDate"`
	Ransomware        string `json:"knownRansomwareCampaignUse"`
	Notes             string `json:"notes"`
}

// ReadKEV reads the KEV catalogue's JSON (its published schema) from r,
// at most max bytes (a larger file fails with fetch.ErrTooLarge). A file
// that is not that schema fails with [ErrSchema]. An entry with a bad
// cveID, a missing or bad dateAdded or dueDate, a value of the wrong type,
// or a CVE already listed is skipped and listed, with its JSON path; the
// others stand.
func ReadKEV(r io.Reader, max int64) (*KEVCatalog, []Skipped, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read the KEV catalogue: %w", err)
	}
	if int64(len(data)) > max {
		return nil, nil, fmt.Errorf("read the KEV catalogue: %w: more than %d bytes", fetch.ErrTooLarge, max)
	}
	var file kevFile
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, nil, fmt.Errorf("%w: not the KEV catalogue's schema: %v", ErrSchema, err)
	}
	var raws []json.RawMessage
	if v := bytes.TrimSpace(file.Vulnerabilities); len(v) == 0 || v[0] != '[' {
		return nil, nil, fmt.Errorf("%w: not the KEV catalogue's schema: no vulnerabilities array", ErrSchema)
	}
	if err := json.Unmarshal(file.Vulnerabilities, &raws); err != nil {
		return nil, nil, fmt.Errorf("%w: not the KEV catalogue's schema: vulnerabilities: %v", ErrSchema, err)
	}
	cat := &KEVCatalog{Version: file.CatalogVersion, Entries: make([]KEVEntry, 0, len(raws))}
	if t, err := time.Parse(time.RFC3339Nano, file.DateReleased); err == nil {
		cat.Released = t.UTC()
	}
	var skipped skipList
	seen := make(map[string]int, len(raws))
	for i, raw := range raws {
		path := fmt.Sprintf("vulnerabilities[%d]", i)
		e, id, field, reason := kevEntry(raw)
		if reason == "" {
			if j, dup := seen[e.CVE]; dup {
				field, reason = ".cveID", fmt.Sprintf("%s is already listed at vulnerabilities[%d]", e.CVE, j)
			}
		}
		if reason != "" {
			skipped.add(Skipped{ID: id, Path: path + field, Reason: reason})
			continue
		}
		seen[e.CVE] = i
		cat.Entries = append(cat.Entries, e)
	}
	return cat, skipped.result(), nil
}

// kevEntry checks one entry; reason is empty when it is valid, else field
// names the culprit (".dueDate").
func kevEntry(raw json.RawMessage) (e KEVEntry, id, field, reason string) {
	var k kevRaw
	if err := json.Unmarshal(raw, &k); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
			return e, "", "", fmt.Sprintf("not a KEV entry: %s is a %s, want a %s", te.Field, te.Value, te.Type)
		}
		return e, "", "", fmt.Sprintf("not a KEV entry: %v", err)
	}
	id = strings.TrimSpace(k.CVEID)
	if !cvePattern.MatchString(id) {
		return e, id, ".cveID", fmt.Sprintf("%q is not a CVE id", k.CVEID)
	}
	added, err := kevDate(k.DateAdded)
	if err != nil {
		return e, id, ".dateAdded", err.Error()
	}
	due, err := kevDate(k.DueDate)
	if err != nil {
		return e, id, ".dueDate", err.Error()
	}
	return KEVEntry{
		CVE: id, Vendor: strings.TrimSpace(k.VendorProject), Product: k.Product, Name: k.VulnerabilityName,
		Description: k.ShortDescription, RequiredAction: k.RequiredAction, Ransomware: k.Ransomware, Notes: k.Notes,
		DateAdded: added, DueDate: due,
	}, id, "", ""
}

func kevDate(s string) (time.Time, error) {
	t, err := time.Parse(time.DateOnly, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a date (YYYY-MM-DD)", s)
	}
	return t, nil
}
