package npm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/upcheck/upcheck/internal/fetch"
)

// DefaultMaxDocument is the default cap on a package document's decoded
// size (UPCHECK_NPM_MAX_DOCUMENT): the largest public ones are a few tens
// of megabytes.
const DefaultMaxDocument = 64 << 20

// Package is what upcheck keeps of a registry's package document (the full
// one, application/json: the abbreviated install format has no publish
// times). Everything else (readmes, maintainers, each version's manifest
// beyond the fields below) is read past and never held.
type Package struct {
	Name     string
	DistTags map[string]string
	// Published is each version's publish time (the document's "time").
	Published map[string]time.Time
	Versions  map[string]Version
	// Repository is the package's source repository as an https URL
	// (NormalizeRepository), "" when the document names none that is
	// one: the notes link of its releases.
	Repository string `json:",omitempty"`
	// DependenciesFrom is the lowest version whose Dependencies its
	// reader kept (KeepDependencies from it), "" when none: a version's
	// dependencies are read only at or above it (a version below may have
	// some that were not kept).
	DependenciesFrom string `json:",omitempty"`
}

// Version is what upcheck keeps of one version's manifest.
type Version struct {
	// Deprecated is the publisher's deprecation message, "" when the
	// version is not deprecated.
	Deprecated       string
	PeerDependencies map[string]string
	Dist             Dist
	// Publisher is the registry account that published the version
	// (_npmUser.name, cut to MaxPublisher bytes), "" when the registry
	// does not say.
	Publisher string `json:",omitempty"`
	// Dependencies are its dependencies and optionalDependencies (the
	// latter's range when both name one, as npm reads them), kept only
	// for the versions a document is read for with KeepDependencies (the
	// documents a tree finding's fix reads); nil otherwise.
	Dependencies map[string]string `json:",omitempty"`
}

// KeepDependencies says for which versions of a document their
// dependencies are kept (Version.Dependencies); nil keeps none. A
// version's dependencies are decoded only when kept: a document read
// without it costs what it did before they were read at all.
type KeepDependencies func(version string) bool

// Dist is a version's "dist": its tarball's integrity and what vouches for it.
type Dist struct {
	Integrity  string
	Shasum     string
	Tarball    string
	Signatures []Signature
	// Attestations is set when the version was published with provenance.
	Attestations *Attestations
}

// Signature is one registry signature of NAME@VERSION:INTEGRITY.
type Signature struct {
	KeyID string `json:"keyid"`
	Sig   string `json:"sig"`
}

// Attestations points at a version's provenance attestations.
type Attestations struct {
	URL           string `json:"url"`
	PredicateType string // provenance.predicateType
}

// ErrTooLarge means a package document passed the cap.
var ErrTooLarge = errors.New("the package document is larger than the limit")

// ErrDocument is wrapped by every error of a document that is not a
// package document.
var ErrDocument = errors.New("not an npm package document")

// documentOptions read a package document as encoding/json read it, in
// what matters for the fields kept: names matched case-insensitively, a
// name given twice allowed (the last wins: real documents repeat
// dependencies), invalid UTF-8 read as U+FFFD (old readmes have it); a
// value of the wrong type is an error either way. The streaming decoder
// of encoding/json/v2 (this module is its mirror until Go 1.27 makes it
// the standard library's) reads and skips about three times faster than
// encoding/json's Decoder, which scanned each version's manifest twice
// (the bench's 40 MB document: 0.35 s against 1.03 s, on a loaded
// machine; with all of encoding/json's legacy options, none of which
// changes the fields kept, 0.54 s).
var documentOptions = jsonv2.JoinOptions(jsonv2.MatchCaseInsensitiveNames(true),
	jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// DecodePackage reads a package document as a stream, keeping only what
// Package holds: memory follows the largest single version's manifest,
// not the document; what is read past (readmes, each version's
// scripts, its dependencies unless kept: DecodePackageKeeping) is skipped
// without being decoded. More than
// max decoded bytes is ErrTooLarge.
func DecodePackage(r io.Reader, max int64) (*Package, error) {
	return DecodePackageKeeping(r, max, nil)
}

// DecodePackageKeeping is DecodePackage keeping the dependencies of the
// versions keep names (nil: none).
func DecodePackageKeeping(r io.Reader, max int64, keep KeepDependencies) (*Package, error) {
	cr := &fetch.CappedReader{R: r, Max: max}
	pkg, err := decodePackage(jsontext.NewDecoder(cr, documentOptions), keep)
	if cr.Over {
		return nil, fmt.Errorf("%w (%d bytes)", ErrTooLarge, max)
	}
	return pkg, err
}

func decodePackage(dec *jsontext.Decoder, keep KeepDependencies) (*Package, error) {
	fail := func(format string, args ...any) (*Package, error) {
		return nil, fmt.Errorf("%w: %s", ErrDocument, fmt.Sprintf(format, args...))
	}
	if err := expectDelim(dec, '{'); err != nil {
		return fail("%v", err)
	}
	pkg := &Package{DistTags: map[string]string{}, Published: map[string]time.Time{}, Versions: map[string]Version{}}
	for dec.PeekKind() != '}' {
		key, err := objectKey(dec)
		if err != nil {
			return fail("%v", err)
		}
		switch key {
		case "name":
			if err := jsonv2.UnmarshalDecode(dec, &pkg.Name); err != nil {
				return fail("name: %v", err)
			}
		case "dist-tags":
			if err := jsonv2.UnmarshalDecode(dec, &pkg.DistTags); err != nil {
				return fail("dist-tags: %v", err)
			}
		case "time":
			var times map[string]string
			if err := jsonv2.UnmarshalDecode(dec, &times); err != nil {
				return fail("time: %v", err)
			}
			for v, s := range times {
				if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
					pkg.Published[v] = t
				}
			}
		case "versions":
			if err := decodeVersions(dec, pkg.Versions, keep); err != nil {
				return fail("versions: %v", err)
			}
		case "repository":
			raw, err := dec.ReadValue()
			if err != nil {
				return fail("repository: %v", err)
			}
			pkg.Repository = repositoryOf(json.RawMessage(raw))
		default:
			if err := dec.SkipValue(); err != nil {
				return fail("%s: %v", key, err)
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return fail("%v", err)
	}
	if pkg.Name == "" {
		return fail("it has no name")
	}
	delete(pkg.Published, "created")
	delete(pkg.Published, "modified")
	return pkg, nil
}

// wireVersion is the part of a version's manifest that is decoded.
type wireVersion struct {
	Deprecated       jsontext.Value    `json:"deprecated"`
	PeerDependencies map[string]string `json:"peerDependencies"`
	NpmUser          jsontext.Value    `json:"_npmUser"`
	Dist             struct {
		Integrity    string      `json:"integrity"`
		Shasum       string      `json:"shasum"`
		Tarball      string      `json:"tarball"`
		Signatures   []Signature `json:"signatures"`
		Attestations *struct {
			URL        string `json:"url"`
			Provenance struct {
				PredicateType string `json:"predicateType"`
			} `json:"provenance"`
		} `json:"attestations"`
	} `json:"dist"`
}

// wireVersionDeps is wireVersion with the dependencies, decoded for the
// versions whose dependencies are kept.
type wireVersionDeps struct {
	wireVersion          `json:",inline"`
	Dependencies         map[string]string `json:"dependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
}

func decodeVersions(dec *jsontext.Decoder, into map[string]Version, keep KeepDependencies) error {
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.PeekKind() != '}' {
		v, err := objectKey(dec)
		if err != nil {
			return err
		}
		var w wireVersion
		var deps map[string]string
		if keep != nil && keep(v) {
			var wd wireVersionDeps
			if err := jsonv2.UnmarshalDecode(dec, &wd); err != nil {
				return fmt.Errorf("%s: %w", v, err)
			}
			w, deps = wd.wireVersion, wd.Dependencies
			if deps == nil && len(wd.OptionalDependencies) > 0 {
				deps = make(map[string]string, len(wd.OptionalDependencies))
			}
			for name, r := range wd.OptionalDependencies {
				deps[name] = r
			}
		} else if err := jsonv2.UnmarshalDecode(dec, &w); err != nil {
			return fmt.Errorf("%s: %w", v, err)
		}
		out := Version{PeerDependencies: w.PeerDependencies, Dist: Dist{Integrity: w.Dist.Integrity, Shasum: w.Dist.Shasum,
			Tarball: w.Dist.Tarball, Signatures: w.Dist.Signatures}, Publisher: publisherOf(json.RawMessage(w.NpmUser)),
			Dependencies: deps}
		// deprecated is a message; some registries write false for none.
		var msg string
		if json.Unmarshal(w.Deprecated, &msg) == nil {
			out.Deprecated = msg
		}
		if a := w.Dist.Attestations; a != nil {
			out.Dist.Attestations = &Attestations{URL: a.URL, PredicateType: a.Provenance.PredicateType}
		}
		into[v] = out
	}
	return expectDelim(dec, '}')
}

func objectKey(dec *jsontext.Decoder) (string, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return "", err
	}
	if tok.Kind() != '"' {
		return "", fmt.Errorf("expected a key, found %v", tok)
	}
	return tok.String(), nil
}

func expectDelim(dec *jsontext.Decoder, want jsontext.Kind) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != want {
		return fmt.Errorf("expected %q, found %v", want, tok)
	}
	return nil
}
