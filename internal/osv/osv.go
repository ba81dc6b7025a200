// Package osv reads one OSV record (the Open Source Vulnerability format)
// and answers the questions upcheck asks of it: which packages it names,
// whether an installed version is affected by OSV's own evaluation rules,
// the version that fixes it, whether it marks a malicious package, and its
// CVSS vector and severity word.
//
// The types are modelled on the OSV schema's Go bindings (osvschema:
// Vulnerability, Affected, Range, Event, Severity, Reference) but written
// here: the bindings are now generated from the schema's protobuf
// definition, they name no JSON path in their errors and put no limit on a
// record's size, and a feed reads records from outside, so every list is
// capped and every problem says where it is. Version ordering for npm is
// SemVer 2.0 precedence (Masterminds/semver, already a dependency) rather
// than osv-scalibr's semantic package, whose module brings a very large
// dependency graph for one comparison.
//
// It imports nothing of the application except internal/jsonpos.
package osv

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// ErrMalformed is wrapped by every error Parse returns: the record is not
// one to trust, and the message names the JSON path of the problem.
var ErrMalformed = errors.New("malformed OSV record")

// ErrVersion is wrapped by the error Match returns for an installed
// version that cannot be ordered (not a SemVer version for npm).
var ErrVersion = errors.New("version cannot be compared")

// Limits on one record. They are generous (the OSV ecosystem archives list
// every affected version of a package, and a package with canary builds has
// tens of thousands); over any of them the record is malformed.
const (
	MaxRecordBytes   = 8 << 20 // the whole JSON text
	MaxDetailsBytes  = 64 << 10
	MaxAffected      = 10_000
	MaxRanges        = 1_000                        // per affected entry
	MaxEvents        = 10_000                       // per range
	MaxVersions      = 100_000                      // per affected entry
	MaxAliases       = readmodel.MaxAdvisoryAliases // also for related
	MaxReferences    = readmodel.MaxAdvisoryReferences
	MaxSeverities    = 100
	MaxSummaryBytes  = 1 << 10 // longer is cut, as details are
	maxVersionLength = 256
	maxIDLength      = readmodel.MaxAdvisoryID // id, aliases, related: the ids a dismissal names
	maxNameLength    = 1024                    // ecosystem, package name, purl
	maxURLLength     = 8 << 10
)

// The ecosystem and range types this package orders. Names of other
// ecosystems are kept as written and never match npm.
const (
	EcosystemNPM = "npm"

	RangeSemver    = "SEMVER"
	RangeEcosystem = "ECOSYSTEM"
	RangeGit       = "GIT"
)

// The severity types CVSS picks from, highest version first.
const (
	SeverityCVSSv4 = "CVSS_V4"
	SeverityCVSSv3 = "CVSS_V3"
	SeverityCVSSv2 = "CVSS_V2"
)

// Record is one OSV record, as far as upcheck reads it.
type Record struct {
	ID               string
	Aliases          []string
	Related          []string
	Summary          string // at most MaxSummaryBytes, cut at a character boundary
	Details          string // at most MaxDetailsBytes, cut at a character boundary
	DetailsTruncated bool
	Modified         time.Time
	Published        time.Time // zero when absent
	Withdrawn        time.Time // zero when absent; a withdrawn record matches nothing
	Affected         []Affected
	Severity         []Severity
	References       []Reference
	DatabaseSpecific json.RawMessage // raw, nil when absent
}

// Package names an affected package as its ecosystem spells it.
type Package struct {
	Ecosystem string
	Name      string
	PURL      string
}

// Affected is one entry of affected[].
type Affected struct {
	Package           Package
	HasPackage        bool // false for an entry without a package (it matches nothing)
	Ranges            []Range
	Versions          []string
	Severity          []Severity
	EcosystemSpecific json.RawMessage
	DatabaseSpecific  json.RawMessage
}

// Range is one affected[].ranges[] entry.
type Range struct {
	Type   string
	Events []Event

	// sorted is Events read and sorted by Parse for an orderable range,
	// so that matching many versions does not read them again; a Range
	// built by hand has none and is read at each Match.
	sorted []point
}

// Event is one event of a range: exactly one of its fields is set.
type Event struct {
	Introduced   string
	Fixed        string
	LastAffected string
	Limit        string
}

// Severity is one severity[] entry: a scoring type and its score (for
// CVSS types, a vector).
type Severity struct {
	Type  string
	Score string
}

// Reference is one references[] entry.
type Reference struct {
	Type string
	URL  string
}

// Hash is the SHA-256 of a record's exact bytes; a sync skips a record
// whose bytes hash as the stored ones do. Defined here so every caller
// hashes the same thing.
func Hash(data []byte) [32]byte {
	return sha256.Sum256(data)
}

// IsWithdrawn reports whether the record has been withdrawn.
func (r *Record) IsWithdrawn() bool {
	return !r.Withdrawn.IsZero()
}

// AdvisoryKeys are an advisory's id and aliases, upper-cased: the keys by
// which advisories are one, whoever published them (the store's
// upcheck_advisory_keys spells them the same).
func AdvisoryKeys(id string, aliases []string) []string {
	out := make([]string, 0, 1+len(aliases))
	out = append(out, strings.ToUpper(id))
	for _, a := range aliases {
		out = append(out, strings.ToUpper(a))
	}
	return out
}
