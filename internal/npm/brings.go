package npm

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/upcheck/upcheck/internal/npmver"
)

// InstallScripts are the scripts npm runs when it installs a package (a
// git dependency's prepare too), in the order it runs them.
var InstallScripts = []string{"preinstall", "install", "postinstall", "prepare"}

// MaxScript caps the text kept of one install-time script, in bytes: the
// rest is cut (Script.Cut); the hash is of the whole text.
const MaxScript = 512

// Script is one install-time script as kept: its text cut to MaxScript
// bytes (at a character) and the SHA-256 of the whole text, so that an
// approval can name the exact script and a change past the cut is seen.
type Script struct {
	Text   string `json:"text"`
	Cut    bool   `json:"cut,omitempty"`
	SHA256 string `json:"sha256"`
}

// ScriptOf is text as kept.
func ScriptOf(text string) Script {
	h := sha256.Sum256([]byte(text))
	s := Script{Text: text, SHA256: hex.EncodeToString(h[:])}
	if len(text) > MaxScript {
		cut := text[:MaxScript]
		for !utf8.ValidString(cut) {
			cut = cut[:len(cut)-1]
		}
		s.Text, s.Cut = cut, true
	}
	return s
}

// Trust is how a version vouches for where it was built, ranked: trusted
// publishing (a CI workflow's identity, no token to steal) above
// provenance (an attestation of the build) above neither.
type Trust int

// The ranks of Trust.
const (
	TrustNone Trust = iota
	TrustProvenance
	TrustTrustedPublishing
)

// String is the rank's name, as stored (readmodel words it).
func (t Trust) String() string {
	switch t {
	case TrustTrustedPublishing:
		return "trusted_publishing"
	case TrustProvenance:
		return "provenance"
	}
	return "none"
}

// TrustOf is v's rank.
func TrustOf(v Version) Trust {
	switch {
	case v.TrustedPublisher:
		return TrustTrustedPublishing
	case v.Dist.Attestations != nil:
		return TrustProvenance
	}
	return TrustNone
}

// The sources a dependency's spec may name besides the registry
// (SourceOf).
const (
	SourceGit     = "git"
	SourceGitHub  = "github" // the "user/repo" shorthand and github:
	SourceTarball = "tarball"
	SourceFile    = "file"
)

// SourceOf is where a dependency's spec (package.json's value) takes the
// package from when it is not the registry: "" for a range, a tag or an
// npm: alias; SourceGit for git URLs and the hosted shorthands
// (gitlab:, bitbucket:, gist:), SourceGitHub for github: and "user/repo",
// SourceTarball for an http(s) URL, SourceFile for file: and link:.
func SourceOf(spec string) string {
	s := strings.TrimSpace(spec)
	lower := strings.ToLower(s)
	switch {
	case strings.HasPrefix(lower, "npm:"):
		return ""
	case strings.HasPrefix(lower, "git+"), strings.HasPrefix(lower, "git:"), strings.HasPrefix(lower, "git@"),
		strings.HasPrefix(lower, "gitlab:"), strings.HasPrefix(lower, "bitbucket:"), strings.HasPrefix(lower, "gist:"):
		return SourceGit
	case strings.HasPrefix(lower, "github:"):
		return SourceGitHub
	case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"):
		return SourceTarball
	case strings.HasPrefix(lower, "file:"), strings.HasPrefix(lower, "link:"), strings.HasPrefix(s, "./"),
		strings.HasPrefix(s, "../"), strings.HasPrefix(s, "/"), strings.HasPrefix(s, "~/"):
		return SourceFile
	}
	// user/repo (optionally #ref): a slash, no space, not a scope.
	repo, _, _ := strings.Cut(s, "#")
	if i := strings.IndexByte(repo, '/'); i > 0 && !strings.HasPrefix(repo, "@") && !strings.ContainsAny(repo, " <>=^~|") {
		return SourceGitHub
	}
	return ""
}

// The sections a dependency is declared in.
const (
	SectionDependencies = "dependencies"
	SectionOptional     = "optionalDependencies"
	SectionPeer         = "peerDependencies"
)

// Declared is one declared dependency of a version.
type Declared struct {
	Name, Spec, Section string
}

// DeclaredOf are v's declared dependencies (its kept dependencies and
// optional ones, and its peers), sorted by section then name.
func DeclaredOf(v Version) []Declared {
	var out []Declared
	for name, spec := range v.Dependencies {
		section := SectionDependencies
		if _, ok := slices.BinarySearch(v.Optional, name); ok {
			section = SectionOptional
		}
		out = append(out, Declared{Name: name, Spec: spec, Section: section})
	}
	for name, spec := range v.PeerDependencies {
		out = append(out, Declared{Name: name, Spec: spec, Section: SectionPeer})
	}
	slices.SortFunc(out, func(a, b Declared) int {
		if c := strings.Compare(a.Section, b.Section); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// ScriptChange is an install-time script the offered version adds or
// changes.
type ScriptChange struct {
	Name string
	New  Script
	// Added: the installed version has no such script; otherwise it is
	// changed (its SHA-256 differs).
	Added bool
}

// Exotic is a declared dependency taken from outside the registry.
type Exotic struct {
	Declared
	Source string // SourceGit, SourceGitHub, SourceTarball, SourceFile
}

// Brings is what an offered version brings that the installed one did
// not (docs/npm.md "What an update brings"): facts only; which are
// signals is readmodel's to word and a policy's to act on.
type Brings struct {
	Version, Installed string
	// Added are the dependencies it declares that the installed version
	// does not (by name, in any section).
	Added []Declared
	// Scripts are its install-time scripts added or changed.
	Scripts []ScriptChange
	// InstallScriptFlag: the registry's hasInstallScript is set on it and
	// not on the installed version (a binding.gyp counts: an install
	// script with no text in scripts).
	InstallScriptFlag bool
	// Exotic are its declared dependencies from outside the registry,
	// whether new or not.
	Exotic []Exotic
	// Trust is its rank; Installed's rank is TrustInstalled, and Line is
	// the newest earlier release of its major line (not a prerelease;
	// "" none) with LineTrust its rank.
	Trust, TrustInstalled, LineTrust Trust
	Line                             string
	// Burst is the most versions of the package published within one
	// BurstWindow that holds its publish time (0 when it has none).
	Burst int
}

// BurstWindow and BurstVersions decide a burst: more than BurstVersions
// versions of one package published within BurstWindow (the TanStack
// releases: 84 versions of 42 packages in six minutes; a monorepo's
// ordinary release publishes one version of each package).
const (
	BurstWindow   = time.Hour
	BurstVersions = 5
)

// Diff is what offered brings over installed, both read from pkg; ok is
// false when either version is not in the document or their manifests
// were not kept (Version.Dependencies and Scripts are kept only for the
// versions a document was read for).
func Diff(pkg *Package, installed, offered string) (Brings, bool) {
	iv, iok := pkg.Versions[installed]
	ov, ook := pkg.Versions[offered]
	if !iok || !ook || !iv.Kept || !ov.Kept {
		return Brings{}, false
	}
	b := Brings{Version: offered, Installed: installed, Trust: TrustOf(ov), TrustInstalled: TrustOf(iv),
		InstallScriptFlag: ov.HasInstallScript && !iv.HasInstallScript}
	had := map[string]bool{}
	for _, d := range DeclaredOf(iv) {
		had[d.Name] = true
	}
	for _, d := range DeclaredOf(ov) {
		if !had[d.Name] {
			b.Added = append(b.Added, d)
		}
		if src := SourceOf(d.Spec); src != "" {
			b.Exotic = append(b.Exotic, Exotic{Declared: d, Source: src})
		}
	}
	for _, name := range InstallScripts {
		s, ok := ov.Scripts[name]
		if !ok {
			continue
		}
		old, had := iv.Scripts[name]
		if !had || old.SHA256 != s.SHA256 {
			b.Scripts = append(b.Scripts, ScriptChange{Name: name, New: s, Added: !had})
		}
	}
	b.Line, b.LineTrust = lineBefore(pkg, offered)
	b.Burst = burst(pkg, offered)
	return b, true
}

// lineBefore is the newest release before offered in its major line (no
// prerelease) and its rank; "" when there is none.
func lineBefore(pkg *Package, offered string) (string, Trust) {
	o, err := npmver.Parse(offered)
	if err != nil {
		return "", TrustNone
	}
	best, bestText := o, ""
	for text := range pkg.Versions {
		v, err := npmver.Parse(text)
		if err != nil || v.Prerelease() != "" || v.Major() != o.Major() || !v.LessThan(o) {
			continue
		}
		if bestText == "" || v.GreaterThan(best) {
			best, bestText = v, text
		}
	}
	if bestText == "" {
		return "", TrustNone
	}
	return bestText, TrustOf(pkg.Versions[bestText])
}

// burst is the most versions of pkg published within one BurstWindow
// that holds version's publish time.
func burst(pkg *Package, version string) int {
	at, ok := pkg.Published[version]
	if !ok {
		return 0
	}
	times := make([]time.Time, 0, len(pkg.Published))
	for _, t := range pkg.Published {
		times = append(times, t)
	}
	return BurstAt(times, at)
}

// BurstAt is the most of times within one BurstWindow that holds at (at
// itself among them): a package's versions' publish times, or a scope's
// packages' (what an update brings, a burst).
func BurstAt(times []time.Time, at time.Time) int {
	var near []time.Time
	for _, t := range times {
		if d := t.Sub(at); d > -BurstWindow && d < BurstWindow {
			near = append(near, t)
		}
	}
	slices.SortFunc(near, func(a, b time.Time) int { return a.Compare(b) })
	most := 0
	for i, start := range near {
		if start.After(at) {
			break
		}
		n := 0
		for _, t := range near[i:] {
			if t.Sub(start) >= BurstWindow {
				break
			}
			n++
		}
		if n > most && !start.Add(BurstWindow).Before(at) {
			most = n
		}
	}
	return most
}
