package npme2e

import (
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/testing/verdaccio"
)

// The scenarios of what an update brings, published with the real
// npm client to Verdaccio and read by the real binary: the axios shape (a
// new dependency first published moments before the release, itself with
// a postinstall), the TanStack shape's part Verdaccio can serve (an
// optional git dependency and a prepare script; valid provenance is a
// field Verdaccio cannot serve: updatecheck's TestNpmUpdateBrings crafts
// it), the Shai-Hulud shape (a postinstall added in a patch release), a
// burst of releases, and a benign control (a dependency's range moved, no
// script) that raises nothing. Verdaccio stamps every version with the
// time it was published, so the control of a years-old dependency is
// crafted there too. The second check takes the registry's 304s and the
// stored dependency facts: the signals stay.
func whatAnUpdateBrings(t *testing.T, reg *verdaccio.Registry, token string) {
	reg.Publish(t, token, verdaccio.Package{Name: "e2e-ax", Version: "1.0.0", Fields: map[string]any{
		"dependencies": map[string]string{"e2e-follow": "^1.0.0"}}})
	reg.Publish(t, token, verdaccio.Package{Name: "e2e-follow", Version: "1.0.0"})
	reg.Publish(t, token, verdaccio.Package{Name: "e2e-plain-crypto", Version: "4.2.1", Files: map[string]string{"setup.js": "\n"},
		Fields: map[string]any{"scripts": map[string]string{"postinstall": "node setup.js"}}})
	reg.Publish(t, token, verdaccio.Package{Name: "e2e-ax", Version: "1.1.0", Fields: map[string]any{
		"dependencies": map[string]string{"e2e-follow": "^1.0.0", "e2e-plain-crypto": "^4.2.0"}}})

	reg.Publish(t, token, verdaccio.Package{Name: "e2e-tan", Version: "1.0.0"})
	reg.Publish(t, token, verdaccio.Package{Name: "e2e-tan", Version: "1.0.1", Fields: map[string]any{
		"optionalDependencies": map[string]string{"e2e-setup": "github:acme-evil/setup#0abc"},
		"scripts":              map[string]string{"prepare": `node -e ""`}}})

	reg.Publish(t, token, verdaccio.Package{Name: "e2e-hulud", Version: "1.0.0", Fields: map[string]any{
		"scripts": map[string]string{"test": "node --test"}}})
	reg.Publish(t, token, verdaccio.Package{Name: "e2e-hulud", Version: "1.0.1", Files: map[string]string{"bundle.js": "\n"},
		Fields: map[string]any{"scripts": map[string]string{"test": "node --test", "postinstall": "node bundle.js"}}})

	publish(t, reg, token, "e2e-burst", "1.0.0", "1.0.1", "1.0.2", "1.0.3", "1.0.4", "1.0.5", "1.0.6")

	reg.Publish(t, token, verdaccio.Package{Name: "e2e-calm", Version: "1.0.0", Fields: map[string]any{
		"dependencies": map[string]string{"e2e-follow": "^1.0.0"}}})
	reg.Publish(t, token, verdaccio.Package{Name: "e2e-calm", Version: "1.1.0", Fields: map[string]any{
		"dependencies": map[string]string{"e2e-follow": "^1.0.0 || ^2.0.0"}}})

	s := newSite(t, map[string]string{"UPCHECK_NPM_REGISTRY": reg.URL})
	s.sync(`{"components": [
	  {"code": "core", "name": "Core", "version": "1.0.0"},
	  {"code": "ax", "name": "Ax", "version": "1.0.0", "source": "npm:e2e-ax"},
	  {"code": "tan", "name": "Tan", "version": "1.0.0", "source": "npm:e2e-tan"},
	  {"code": "hulud", "name": "Hulud", "version": "1.0.0", "source": "npm:e2e-hulud"},
	  {"code": "burst", "name": "Burst", "version": "1.0.0", "source": "npm:e2e-burst"},
	  {"code": "calm", "name": "Calm", "version": "1.0.0", "source": "npm:e2e-calm"}]}`)
	want := map[string][]readmodel.SignalKind{
		"ax":    {readmodel.SignalYoungDependency},
		"tan":   {readmodel.SignalInstallScript, readmodel.SignalExoticSource},
		"hulud": {readmodel.SignalInstallScript},
		"burst": {readmodel.SignalBurst},
		"calm":  nil,
	}
	for _, when := range []string{"first check", "second check (304s)"} {
		if line, code := s.check(); code != 0 || line.Status != "completed" || line.Failed != 0 {
			t.Fatalf("%s: exit %d, %s", when, code, line.raw)
		}
		for code, kinds := range want {
			r := s.row(code)
			var got []readmodel.SignalKind
			for _, sig := range r.Brings {
				got = append(got, sig.Kind)
			}
			if len(got) != len(kinds) {
				t.Errorf("%s: %s's signals %v, want %v (%s)", when, code, got, kinds, rowJSON(r.Brings))
				continue
			}
			for i := range got {
				if got[i] != kinds[i] {
					t.Errorf("%s: %s's signals %v, want %v", when, code, got, kinds)
				}
			}
		}
		ax := s.detail("ax").Registry
		if ax == nil || len(ax.Brings) != 1 || ax.Brings[0].Args.Name != "e2e-plain-crypto" ||
			ax.Brings[0].Args.DependencyVersion != "4.2.1" || len(ax.BringsUnread) != 0 {
			t.Errorf("%s: ax's registry facts %s; want e2e-plain-crypto 4.2.1 young, nothing unread", when, rowJSON(ax))
		}
		hulud := s.row("hulud").Brings
		if len(hulud) == 1 && (hulud[0].Args.Name != "postinstall" || hulud[0].Args.Text != "node bundle.js" || !hulud[0].Args.Added) {
			t.Errorf("%s: hulud's script %+v", when, hulud[0].Args)
		}
	}
}
