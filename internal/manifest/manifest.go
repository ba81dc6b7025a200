// Package manifest reads the list of installed components from a JSON or
// YAML file. A manifest is accepted or refused as a whole: one bad entry
// refuses the file with a message naming the entry and the field, so a typo
// never half-applies.
package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/upcheck/upcheck/internal/jsonpos"
	"github.com/upcheck/upcheck/internal/keys"
	"github.com/upcheck/upcheck/internal/localfile"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/npmver"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
)

// ErrInvalid wraps every refusal of a manifest.
var ErrInvalid = errors.New("invalid manifest")

// MaxSize caps the manifest file; a site with thousands of plugins fits in a
// fraction of it.
const MaxSize = 8 << 20

// Component is one installed component.
type Component struct {
	Code    string `json:"code" yaml:"code"`
	Name    string `json:"name" yaml:"name"`
	Version string `json:"version" yaml:"version"`
	Source  string `json:"source,omitempty" yaml:"source,omitempty"`
	Key     string `json:"key,omitempty" yaml:"key,omitempty"`
	// Keys and Threshold pin several keys, of which Threshold (default 1)
	// must sign; Key and Keys are never both set.
	Keys      []string `json:"keys,omitempty" yaml:"keys,omitempty"`
	Threshold int      `json:"threshold,omitempty" yaml:"threshold,omitempty"`
	// Package names the npm package the component is, so that the
	// advisory feeds' records of it apply (docs/feeds.md), for a
	// component whose source is not "npm:NAME" (whose package is NAME).
	Package string `json:"package,omitempty" yaml:"package,omitempty"`
	// Policy is the component's own policy: each member it sets
	// overrides the manifest's (PolicyOf).
	Policy release.Policy `json:"policy,omitzero" yaml:"policy,omitempty"`
}

// NpmPackage is the npm package the component is, for matching the
// advisory feeds' records: the package its "npm:NAME" source names, else
// its "package"; "" none.
func (c Component) NpmPackage() string {
	if n, err := npm.ParseSource(c.Source); err == nil && npm.IsSource(c.Source) {
		return string(n)
	}
	return c.Package
}

// Pin returns the canonical text of the component's pin
// (keys.KeySet.String): "" when no key is pinned, the key's own text
// for one key, "T of ed25519:A ed25519:B …" otherwise. It is "" also for a
// pin that is not valid (Validate refuses it).
func (c Component) Pin() string {
	set, err := c.keySet()
	if err != nil {
		return ""
	}
	return set.String()
}

func (c Component) keySet() (keys.KeySet, error) {
	switch {
	case c.Key != "" && len(c.Keys) > 0:
		return keys.KeySet{}, errors.New("key and keys are both set: pin one key with key, or several with keys")
	case c.Key != "":
		if c.Threshold != 0 {
			return keys.KeySet{}, errors.New("threshold goes with keys, not with key")
		}
		return keys.NewKeySet([]string{c.Key}, 1)
	case len(c.Keys) > 0:
		if c.Threshold < 0 {
			return keys.KeySet{}, fmt.Errorf("threshold %d is not between 1 and the number of keys (%d)", c.Threshold, len(c.Keys))
		}
		return keys.NewKeySet(c.Keys, c.Threshold)
	case c.Threshold != 0:
		return keys.KeySet{}, errors.New("threshold is set but no keys are")
	}
	return keys.KeySet{}, nil
}

// Manifest is the whole file.
type Manifest struct {
	Components []Component `json:"components" yaml:"components"`
	// Policy is the site-wide policy (docs/policy.md); the zero Policy
	// offers every release at once.
	Policy release.Policy `json:"policy,omitzero" yaml:"policy,omitempty"`
	// Dismissals are advisories the site has judged not to apply to it.
	Dismissals []Dismissal `json:"dismissals,omitempty" yaml:"dismissals,omitempty"`
	// Skips are releases the site passes over.
	Skips []Skip `json:"skips,omitempty" yaml:"skips,omitempty"`
	// Approvals approve what a version brings, for a policy whose approve
	// holds it.
	Approvals []Approval `json:"approvals,omitempty" yaml:"approvals,omitempty"`
}

// Core returns the core component, if the manifest lists it.
func (m *Manifest) Core() (Component, bool) {
	for _, c := range m.Components {
		if c.Code == "core" {
			return c, true
		}
	}
	return Component{}, false
}

var codePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,99}$`)

// Load reads and validates the manifest at path; the extension picks the
// format (.json, .yaml, .yml).
func Load(path string) (*Manifest, error) {
	body, err := localfile.Read(path, MaxSize)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	if len(body) > MaxSize {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrInvalid, path, MaxSize)
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".json":
		return ParseJSON(body)
	case ".yaml", ".yml":
		m, err := ParseYAML(body)
		if le := (*LimitError)(nil); errors.As(err, &le) {
			return nil, fmt.Errorf("%w: %s %v", ErrInvalid, path, le)
		}
		return m, err
	default:
		return nil, fmt.Errorf("%w: %s: unknown extension %q (want .json, .yaml or .yml)", ErrInvalid, path, ext)
	}
}

// ParseJSON parses and validates a JSON manifest. Unknown fields are refused:
// a misspelt "verison" must not silently mean "no version". A syntax error,
// a value of the wrong type, an unknown field and trailing data are named
// with their line and column.
func ParseJSON(body []byte) (*Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, describeJSON(body, err, "the manifest", reflect.TypeFor[Manifest]()))
	}
	if line, col, ok := jsonpos.Trailing(body, dec.InputOffset()); ok {
		return nil, fmt.Errorf("%w: unexpected data after the manifest at line %d, column %d", ErrInvalid, line, col)
	}
	return &m, m.Validate()
}

// describeJSON words a decode error with its place; whole names the
// top-level value ("the manifest"), t is the type body was decoded into.
// The json package reports an unknown field by name only, so its place is
// found by unknownMember.
func describeJSON(body []byte, err error, whole string, t reflect.Type) string {
	quoted, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
	if !ok {
		return jsonpos.Describe(body, err, whole)
	}
	name, uerr := strconv.Unquote(quoted)
	if uerr != nil {
		return strings.TrimPrefix(err.Error(), "json: ")
	}
	at, ok := unknownMember(body, t, name)
	if !ok {
		return fmt.Sprintf("unknown field %q", name)
	}
	line, col := jsonpos.Position(body, at)
	return fmt.Sprintf("unknown field %q at line %d, column %d", name, line, col)
}

// ParseYAML parses and validates a YAML manifest, with the same strictness,
// a nesting of at most MaxYAMLNesting levels and within MaxYAMLTokens,
// MaxYAMLBytes and MaxYAMLKeys.
// Its errors are named with their line and column too, on one line like the
// JSON ones (the YAML library's own message spans several).
func ParseYAML(body []byte) (*Manifest, error) {
	// Tokenized twice (a manifest is small) so that the parser never sees
	// a nesting it would take gigabytes to parse.
	if _, err := TokenizeYAML(body); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	var m Manifest
	if err := yaml.UnmarshalWithOptions(body, &m, yaml.Strict()); err != nil {
		var yerr yaml.Error
		if errors.As(err, &yerr) && yerr.GetToken() != nil {
			pos := yerr.GetToken().Position
			return nil, fmt.Errorf("%w: %s at line %d, column %d", ErrInvalid, yerr.GetMessage(), pos.Line, pos.Column)
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return &m, m.Validate()
}

// CheckRegistries reports, for every npm source of m, a registry that no
// setting names (npm.Registries.For), all at once: an npm source with no
// registry is a manifest error that says which setting is missing.
func (m *Manifest) CheckRegistries(r npm.Registries) error {
	var problems []string
	for i, c := range m.Components {
		if !npm.IsSource(c.Source) {
			continue
		}
		name, err := npm.ParseSource(c.Source)
		if err != nil {
			continue // Validate says so
		}
		if _, err := r.For(name); err != nil {
			problems = append(problems, fmt.Sprintf("components[%d] (%q): source %s: %v", i, c.Code, c.Source, err))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w:\n  %s", ErrInvalid, strings.Join(problems, "\n  "))
	}
	return nil
}

// Validate checks every entry and reports all problems at once.
func (m *Manifest) Validate() error {
	v := validation{seen: map[string]int{}, keyOfSource: map[string]string{}}
	for i, c := range m.Components {
		v.component(i, c)
	}
	problems := v.problems
	if err := m.Policy.Validate(); err != nil {
		problems = append(problems, "policy: "+err.Error())
	}
	problems = append(problems, m.dismissalProblems()...)
	problems = append(problems, m.skipProblems()...)
	problems = append(problems, m.approvalProblems()...)
	if _, ok := m.Core(); !ok {
		problems = append(problems, `no component has code "core": the core is what plugins' requires_core is checked against`)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w:\n  %s", ErrInvalid, strings.Join(problems, "\n  "))
	}
	return nil
}

// validation gathers Validate's problems with the components, and what
// the components seen so far hold that a later one must not repeat (its
// code) or must agree with (its source's pinned keys).
type validation struct {
	problems    []string
	seen        map[string]int    // code → index of the first component with it
	keyOfSource map[string]string // source → its pinned key set
}

// add records a problem with components[i].
func (v *validation) add(i int, c Component, format string, args ...any) {
	name := fmt.Sprintf("components[%d]", i)
	if c.Code != "" {
		name += fmt.Sprintf(" (%q)", c.Code)
	}
	v.problems = append(v.problems, name+": "+fmt.Sprintf(format, args...))
}

// component checks one entry: its code, name, version, source, keys,
// package and policy, in that order.
func (v *validation) component(i int, c Component) {
	v.code(i, c)
	if strings.TrimSpace(c.Name) == "" {
		v.add(i, c, "name is missing")
	}
	if _, err := npmver.Parse(c.Version); err != nil {
		v.add(i, c, "version %q is not a semantic version", c.Version)
	}
	v.source(i, c)
	set, err := c.keySet()
	switch {
	case err != nil && c.Key != "" && len(c.Keys) == 0:
		v.add(i, c, "key: %v", err)
	case err != nil && len(c.Keys) > 0:
		v.add(i, c, "keys: %v", err)
	case err != nil:
		v.add(i, c, "%v", err)
	}
	if c.Package != "" {
		if _, err := npm.ValidateName(c.Package); err != nil {
			v.add(i, c, "package: %v", err)
		}
	}
	if err := c.Policy.Validate(); err != nil {
		v.add(i, c, "policy: %v", err)
	}
	if (c.Key != "" || len(c.Keys) > 0) && c.Source == "" {
		v.add(i, c, "key is set but there is no source to check it against")
	}
	if c.Source != "" && err == nil {
		// One document, one signature set: the components sharing a
		// source must agree on its whole pin (keys and threshold).
		if k, ok := v.keyOfSource[c.Source]; ok && k != set.String() {
			v.add(i, c, "pinned keys differ from another component with the same source")
		}
		v.keyOfSource[c.Source] = set.String()
	}
}

// code checks that the entry's code is there, well-formed and not taken.
func (v *validation) code(i int, c Component) {
	switch {
	case c.Code == "":
		v.add(i, c, "code is missing")
	case !codePattern.MatchString(c.Code):
		v.add(i, c, "code must be lower-case letters, digits, '.', '_' or '-' (at most 100)")
	default:
		if j, dup := v.seen[c.Code]; dup {
			v.add(i, c, "code is a duplicate of components[%d]", j)
		}
		v.seen[c.Code] = i
	}
}

// source checks the entry's source by its kind: an offline document's
// path, an npm package (pinned by its registry's keys, named once), or an
// http(s) URL.
func (v *validation) source(i int, c Component) {
	switch {
	case readmodel.SourceKindOf(c.Source) == readmodel.SourceOffline:
		if err := readmodel.CheckOfflineSource(c.Source); err != nil {
			v.add(i, c, "source: %v", err)
		}
	case npm.IsSource(c.Source):
		if _, err := npm.ParseSource(c.Source); err != nil {
			v.add(i, c, "source: %v", err)
		}
		if c.Key != "" || len(c.Keys) > 0 {
			v.add(i, c, "key: an npm source is verified with its registry's signing keys, pinned when first seen: pin no key for it")
		}
		if n, err := npm.ParseSource(c.Source); err == nil && c.Package != "" && c.Package != string(n) {
			v.add(i, c, "package %q differs from the package its source names (%s): leave package out for an npm source", c.Package, n)
		}
	case c.Source != "":
		if u, err := url.Parse(c.Source); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			v.add(i, c, "source %q is not an http(s) URL", c.Source)
		}
	}
}
