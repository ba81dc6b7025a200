package updatecheck

import (
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/npmver"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
)

// bringsSignals are the signals of what offered brings over installed
// (readmodel.SignalKind), most pressing first, the registry dependencies
// it adds whose package's age is not known (n.deps has no facts of them),
// so that no young_dependency is silently absent, and, when it was
// published with provenance whose repository was not compared with the
// package's, why (so that no provenance_repository is silently absent);
// none when either manifest was not kept.
func bringsSignals(n *npmDoc, installed, offered string) ([]readmodel.Signal, []readmodel.UnreadDependency, []readmodel.ProvenanceUnread) {
	b, ok := npm.Diff(n.pkg, installed, offered)
	if !ok {
		return nil, nil, nil
	}
	var out []readmodel.Signal
	add := func(k readmodel.SignalKind, a readmodel.SignalArgs) {
		a.Version = offered
		out = append(out, readmodel.Signal{Kind: k, Args: a})
	}
	for _, s := range b.Scripts {
		add(readmodel.SignalInstallScript, readmodel.SignalArgs{Name: s.Name, Text: s.New.Text, Cut: s.New.Cut,
			SHA256: s.New.SHA256, Added: s.Added})
	}
	if b.InstallScriptFlag && len(b.Scripts) == 0 {
		add(readmodel.SignalInstallScript, readmodel.SignalArgs{Added: true})
	}
	for _, e := range b.Exotic {
		add(readmodel.SignalExoticSource, readmodel.SignalArgs{Name: e.Name, Section: e.Section, Spec: e.Spec, Source: e.Source})
	}
	// Below the installed version's rank; provenance lost against it is
	// already said (provenance_lost), so only a fall from trusted
	// publishing is said here. Below the line's rank: whatever fell.
	switch {
	case b.Trust < b.TrustInstalled && !(b.TrustInstalled == npm.TrustProvenance && b.Trust == npm.TrustNone):
		add(readmodel.SignalTrustLower, readmodel.SignalArgs{Trust: b.Trust.String(), Was: b.TrustInstalled.String(), Compared: installed})
	case b.Line != "" && b.Line != installed && b.Trust < b.LineTrust:
		add(readmodel.SignalTrustLower, readmodel.SignalArgs{Trust: b.Trust.String(), Was: b.LineTrust.String(), Compared: b.Line})
	}
	var provUnread []readmodel.ProvenanceUnread
	if a, differs, why := provenanceSignal(n, offered); differs {
		add(readmodel.SignalProvenanceRepository, a)
	} else if why != "" {
		provUnread = append(provUnread, readmodel.ProvenanceUnread{Version: offered, Reason: why})
	}
	released, timed := n.pkg.Published[offered]
	var unread []readmodel.UnreadDependency
	for _, d := range b.Added {
		if !timed || npm.SourceOf(d.Spec) != "" {
			continue
		}
		read, ok := n.deps[d.Name]
		facts := read.facts
		switch {
		case !ok:
			read.unread = readmodel.UnreadNotChecked
		case facts != nil && facts.first.IsZero():
			read.unread = readmodel.UnreadNoTime
		}
		if facts == nil || facts.first.IsZero() {
			unread = append(unread, readmodel.UnreadDependency{Version: offered, Name: d.Name, Section: d.Section, Spec: d.Spec,
				Reason: read.unread})
			continue
		}
		if released.Sub(facts.first) >= readmodel.YoungDependency {
			continue
		}
		first := facts.first
		a := readmodel.SignalArgs{Name: d.Name, Section: d.Section, Spec: d.Spec, FirstPublished: &first, Released: &released}
		if v := facts.pick(d.Spec); v != "" {
			a.DependencyVersion = v
			if t, ok := facts.published[v]; ok {
				a.Published = &t
			}
		}
		add(readmodel.SignalYoungDependency, a)
	}
	// Across its scope (scopeBurstStep) when more than of the package
	// alone; one burst is said either way.
	window := int(npm.BurstWindow / time.Minute)
	if sb := n.scopeBursts[offered]; sb.count > npm.BurstVersions && sb.count > b.Burst {
		add(readmodel.SignalBurst, readmodel.SignalArgs{Count: sb.count, Window: window, Scope: sb.scope})
	} else if b.Burst > npm.BurstVersions {
		add(readmodel.SignalBurst, readmodel.SignalArgs{Count: b.Burst, Window: window})
	}
	readmodel.SortSignals(out)
	return out, unread, provUnread
}

// pick is the version of the dependency that spec takes: the newest one
// in its range, not newer than latest (npm's choice); "" when none is or
// the range does not read.
func (f *dependencyFacts) pick(spec string) string {
	rng, err := release.ParseRange(spec)
	if err != nil {
		return ""
	}
	ceiling, _ := npmver.Parse(f.latest)
	var best *semver.Version
	text := ""
	for v := range f.published {
		p, err := npmver.Parse(v)
		if err != nil || p.Prerelease() != "" || !rng.Contains(p) || (ceiling != nil && p.GreaterThan(ceiling)) {
			continue
		}
		if best == nil || p.GreaterThan(best) {
			best, text = p, v
		}
	}
	return text
}
