package updatedoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/upcheck/upcheck/internal/release"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestEvaluateGolden")

// evaluateCases are the golden cases: a document from testdata × an install.
// Each one's rendering is compared with testdata/golden/<name>.golden.
var evaluateCases = []struct {
	name      string
	document  string
	code      string
	installed string
	core      string
}{
	{name: "plain-update", document: "acme.json", code: "forum", installed: "2.9.0", core: "1.9.0"},
	{name: "up-to-date", document: "acme.json", code: "forum", installed: "3.0.0", core: "1.9.0"},
	{name: "newer-than-published", document: "acme.json", code: "forum", installed: "3.1.0", core: "1.9.0"},
	{name: "security-update", document: "acme.json", code: "blog", installed: "2.3.1", core: "1.9.0"},
	{name: "security-update-needs-newer-core", document: "acme.json", code: "blog", installed: "2.3.1", core: "1.7.0"},
	{name: "security-needs-newer-core-beyond-update", document: "acme.json", code: "gallery", installed: "1.0.0", core: "1.9.0"},
	{name: "advisory-with-fix", document: "acme.json", code: "blog", installed: "2.3.0", core: "1.9.0"},
	{name: "advisory-without-fix", document: "acme.json", code: "shop", installed: "4.1.0", core: "1.9.0"},
	{name: "advisories-with-and-without-fix", document: "acme.json", code: "blog", installed: "2.2.0", core: "1.9.0"},
	{name: "prerelease-ignored", document: "acme.json", code: "blog", installed: "2.4.0", core: "1.9.0"},
	{name: "prerelease-installed", document: "acme.json", code: "blog", installed: "2.4.0-rc.1", core: "1.9.0"},
	{name: "only-prereleases-stable-installed", document: "prerelease.json", code: "lab", installed: "0.0.9", core: "1.9.0"},
	{name: "only-prereleases-prerelease-installed", document: "prerelease.json", code: "lab", installed: "0.1.0-alpha.1", core: "1.9.0"},
	{name: "core-ignores-requires-core", document: "acme.json", code: "core", installed: "1.9.0", core: ""},
	{name: "package-missing", document: "acme.json", code: "wiki", installed: "1.0.0", core: "1.9.0"},
	{name: "package-empty", document: "acme.json", code: "empty", installed: "1.0.0", core: "1.9.0"},
	{name: "unparseable-installed", document: "acme.json", code: "blog", installed: "2.3", core: "1.9.0"},
	{name: "unparseable-installed-v-prefix", document: "acme.json", code: "blog", installed: "v2.3.0", core: "1.9.0"},
	{name: "unparseable-core", document: "acme.json", code: "blog", installed: "2.3.0", core: "latest"},
	// Ranges with partial versions: "<=2.4" holds all of 2.4.x, ">2.4"
	// starts with the pre-releases of 2.5.0, "1" is 1.x.
	{name: "partial-range-end-of-series", document: "partial.json", code: "calendar", installed: "2.4.7", core: "1.9.0"},
	{name: "partial-range-old-core", document: "partial.json", code: "calendar", installed: "2.4.7", core: "1.7.0"},
	{name: "partial-range-next-prerelease", document: "partial.json", code: "calendar", installed: "2.5.0-beta.1", core: "2.0.0"},
	// The conclusions docs/update-document.md draws from its example.
	{name: "example-blog", document: "example.json", code: "blog", installed: "2.3.0", core: "1.9.0"},
	{name: "example-blog-old-core", document: "example.json", code: "blog", installed: "2.3.0", core: "1.7.0"},
	{name: "example-blog-prerelease", document: "example.json", code: "blog", installed: "2.5.0-alpha.3", core: "1.9.0"},
	{name: "example-gallery", document: "example.json", code: "gallery", installed: "1.1.0", core: "1.9.0"},
}

// goldenRendering is what a golden file holds: the inputs, so that the file
// reads on its own, and the evaluation or the error.
type goldenRendering struct {
	Document   string              `json:"document"`
	Code       string              `json:"code"`
	Installed  string              `json:"installed"`
	Core       string              `json:"installed_core"`
	Evaluation *release.Evaluation `json:"evaluation,omitempty"`
	Error      string              `json:"error,omitempty"`
}

func parseTestdata(t *testing.T, name string) *Document {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Parse(body)
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return doc
}

func TestEvaluateGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range evaluateCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc := parseTestdata(t, tc.document)
			ev, err := Evaluate(doc, tc.code, tc.installed, tc.core)
			out := goldenRendering{
				Document: tc.document, Code: tc.code, Installed: tc.installed, Core: tc.core,
			}
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("error %q does not wrap ErrInvalid", err)
				}
				out.Error = err.Error()
			} else {
				out.Evaluation = &ev
			}
			// Unescaped, so that ranges read as ">=1.8.0" and not "\u003e=1.8.0".
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(out); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()

			path := filepath.Join("testdata", "golden", tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestEvaluateGolden -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("evaluation differs from %s (run with -update if the change is intended)\ngot:\n%s\nwant:\n%s", path, got, want)
			}
		})
	}
}

// A golden file without a case would never be compared again and would
// silently document behaviour nobody checks.
func TestEvaluateGoldenFilesHaveCases(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.golden"))
	if err != nil {
		t.Fatal(err)
	}
	cases := make(map[string]bool, len(evaluateCases))
	for _, tc := range evaluateCases {
		cases[tc.name] = true
	}
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".golden"); !cases[name] {
			t.Errorf("%s has no case in evaluateCases", f)
		}
	}
	if len(files) != len(evaluateCases) && !*update {
		t.Errorf("%d golden files for %d cases", len(files), len(evaluateCases))
	}
}

// Documents are shared between evaluations (one stored document, many
// components); evaluating must not write to them.
func TestEvaluateConcurrently(t *testing.T) {
	t.Parallel()
	doc := parseTestdata(t, "acme.json")
	want, err := Evaluate(doc, "blog", "2.3.0", "1.9.0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 50 {
				got, err := Evaluate(doc, "blog", "2.3.0", "1.9.0")
				if err != nil {
					errs <- err
					return
				}
				if got.Update == nil || got.Update.Version != want.Update.Version || len(got.Advisories) != len(want.Advisories) {
					errs <- errors.New("concurrent evaluation differs")
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// An Evaluation must not alias the document: the caller may store or
// change it.
func TestEvaluateCopiesReleases(t *testing.T) {
	t.Parallel()
	doc := parseTestdata(t, "acme.json")
	ev, err := Evaluate(doc, "forum", "2.9.0", "1.9.0")
	if err != nil {
		t.Fatal(err)
	}
	ev.Update.Summary = "changed"
	ev.Latest.Version = "9.9.9"
	again, err := Evaluate(doc, "forum", "2.9.0", "1.9.0")
	if err != nil {
		t.Fatal(err)
	}
	if again.Update.Summary != "Threaded replies" || again.Latest.Version != "3.0.0" {
		t.Errorf("changing an release.Evaluation changed the document: %+v", again)
	}
}

// Documents built in Go rather than parsed (tests elsewhere, fixtures) are
// evaluated the same way, and bad values in them are errors, not panics.
func TestEvaluateHandBuiltDocument(t *testing.T) {
	t.Parallel()
	doc := &Document{Packages: map[string]*release.Package{
		"blog": {
			Releases: []release.Release{
				{Version: "1.0.1", Security: true},
				{Version: "1.1.0", RequiresCore: ">=2.0.0"},
			},
			Advisories: []release.Advisory{{ID: "X-1", Affected: "<1.0.1", FixedIn: "1.0.1"}},
		},
		"bad-version":  {Releases: []release.Release{{Version: "one"}}},
		"bad-affected": {Advisories: []release.Advisory{{ID: "X-2"}}},
	}}
	ev, err := Evaluate(doc, "blog", "1.0.0", "1.5.0")
	if err != nil {
		t.Fatal(err)
	}
	if ev.Update == nil || ev.Update.Version != "1.0.1" || !ev.Security || !ev.NeedsNewerCore ||
		ev.BlockedUpdate == nil || ev.BlockedUpdate.Version != "1.1.0" || len(ev.Advisories) == 0 {
		t.Errorf("evaluation = %+v", ev)
	}

	for code, want := range map[string]string{
		"bad-version":  `releases[0].version "one" of package "bad-version" is not a semantic version`,
		"bad-affected": `advisories[0].affected of package "bad-affected": range "" is empty`,
	} {
		_, err := Evaluate(doc, code, "0.1.0", "1.5.0")
		if !errors.Is(err, ErrInvalid) || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Evaluate(%s) = %v, want ErrInvalid containing %q", code, err, want)
		}
	}

	if _, err := Evaluate(nil, "blog", "1.0.0", "1.5.0"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Evaluate(nil document) = %v, want ErrInvalid", err)
	}
}
