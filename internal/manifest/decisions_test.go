package manifest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/release"
)

// A manifest's policies, dismissals and skips read the same from JSON and
// YAML; a component's policy overrides the site's member by member.
func TestPoliciesDismissalsAndSkips(t *testing.T) {
	t.Parallel()
	jsonDoc := `{"policy": {"offer": "minor", "soak": "3d"},
	  "components": [
	    {"code": "core", "name": "Core", "version": "1.9.0"},
	    {"code": "blog", "name": "Blog", "version": "2.3.0", "policy": {"offer": "security", "hold": "<3.0.0"}}],
	  "dismissals": [
	    {"component": "blog", "advisory": "GHSA-aaaa-bbbb-cccc", "reason": "the importer is not enabled", "expires": "2027-01-31"},
	    {"component": "blog", "advisory": "CVE-2026-1234", "reason": "patched by hand", "expires": "2027-01-31T12:30:00+02:00"},
	    {"component": "core", "advisory": "GHSA-aaaa-bbbb-cccc", "reason": "not the same component"}],
	  "skips": [{"component": "core", "version": "2.0.0-beta.1", "reason": "breaks the theme"}]}`
	yamlDoc := `policy:
  offer: minor
  soak: 3d
components:
  - {code: core, name: Core, version: 1.9.0}
  - code: blog
    name: Blog
    version: 2.3.0
    policy: {offer: security, hold: "<3.0.0"}
dismissals:
  - component: blog
    advisory: GHSA-aaaa-bbbb-cccc
    reason: the importer is not enabled
    expires: "2027-01-31"
  - {component: blog, advisory: CVE-2026-1234, reason: patched by hand, expires: "2027-01-31T12:30:00+02:00"}
  - {component: core, advisory: GHSA-aaaa-bbbb-cccc, reason: not the same component}
skips:
  - {component: core, version: 2.0.0-beta.1, reason: breaks the theme}
`
	j, err := ParseJSON([]byte(jsonDoc))
	if err != nil {
		t.Fatal(err)
	}
	y, err := ParseYAML([]byte(yamlDoc))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(j, y) {
		t.Fatalf("json %+v\nyaml %+v", j, y)
	}
	if want := (release.Policy{Offer: release.OfferMinor, Soak: "3d"}); j.PolicyOf(j.Components[0]) != want {
		t.Errorf("core's policy = %+v, want the site's %+v", j.PolicyOf(j.Components[0]), want)
	}
	if want := (release.Policy{Offer: release.OfferSecurity, Hold: "<3.0.0", Soak: "3d"}); j.PolicyOf(j.Components[1]) != want {
		t.Errorf("blog's policy = %+v, want %+v", j.PolicyOf(j.Components[1]), want)
	}
	if len(j.Dismissals) != 3 || j.Skips[0] != (Skip{Component: "core", Version: "2.0.0-beta.1", Reason: "breaks the theme"}) {
		t.Fatalf("dismissals %+v, skips %+v", j.Dismissals, j.Skips)
	}
	for i, want := range []time.Time{
		time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC), // a date is 00:00 UTC of it
		time.Date(2027, 1, 31, 10, 30, 0, 0, time.UTC),
		{},
	} {
		got, ok := j.Dismissals[i].ExpiresAt()
		if ok != !want.IsZero() || !got.Equal(want) {
			t.Errorf("dismissals[%d].ExpiresAt() = %v %v, want %v", i, got, ok, want)
		}
	}
	// To the microsecond, as the database stores it: a finer expiry would
	// differ from the stored one at every sync.
	if got, ok := (Dismissal{Expires: "2027-03-01T10:00:00.123456789Z"}).ExpiresAt(); !ok ||
		!got.Equal(time.Date(2027, 3, 1, 10, 0, 0, 123456000, time.UTC)) {
		t.Errorf("a nanosecond expiry = %v %v, want it to the microsecond", got, ok)
	}
	if _, ok := (Dismissal{Expires: "tomorrow"}).ExpiresAt(); ok {
		t.Error("an expiry that does not parse has a time")
	}
}

// An expiry in the past is no manifest error: the dismissal has lapsed.
func TestLapsedDismissalIsValid(t *testing.T) {
	t.Parallel()
	m, err := ParseJSON([]byte(`{"components": [{"code": "core", "name": "Core", "version": "1.0.0"}],
	  "dismissals": [{"component": "core", "advisory": "CVE-2020-1", "reason": "old", "expires": "2021-03-04"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if at, ok := m.Dismissals[0].ExpiresAt(); !ok || !at.Before(time.Now()) {
		t.Fatalf("expires at %v %v", at, ok)
	}
}

// Each rule refuses the manifest with the entry and the field named, in
// JSON and in YAML alike (the same text: JSON is YAML's flow style).
func TestDecisionRefusals(t *testing.T) {
	t.Parallel()
	doc := func(extra string) string {
		return `{"components": [{"code": "core", "name": "Core", "version": "1.0.0"},
		  {"code": "blog", "name": "Blog", "version": "2.3.0"}], ` + extra + `}`
	}
	dismissal := func(fields string) string { return doc(`"dismissals": [` + fields + `]`) }
	skip := func(fields string) string { return doc(`"skips": [` + fields + `]`) }
	cases := []struct{ name, doc, want string }{
		{"site policy offer", doc(`"policy": {"offer": "major"}`), `policy: offer "major" is not one of all, minor, patch, security`},
		{"site policy soak", doc(`"policy": {"soak": "x"}`), `  policy: soak "x" is not a duration`},
		{"site policy hold", doc(`"policy": {"hold": "<<3"}`), `  policy: hold: `},
		{"component policy", `{"components": [{"code": "core", "name": "Core", "version": "1.0.0"},
		  {"code": "blog", "name": "Blog", "version": "2.3.0", "policy": {"soak": "400d"}}]}`,
			`components[1] ("blog"): policy: soak "400d" is longer than a year`},

		{"dismissal without a component", dismissal(`{"advisory": "A", "reason": "r"}`), `dismissals[0]: component is missing`},
		{"dismissal of no component", dismissal(`{"component": "shop", "advisory": "A", "reason": "r"}`), `dismissals[0]: component "shop" is not a component of the manifest`},
		{"dismissal without an advisory", dismissal(`{"component": "blog", "reason": "r"}`), `dismissals[0]: advisory is missing`},
		{"advisory too long", dismissal(`{"component": "blog", "advisory": "` + strings.Repeat("é", 100) + `x", "reason": "r"}`), `dismissals[0]: advisory is longer than 200 bytes`},
		{"advisory with a control character", dismissal(`{"component": "blog", "advisory": "CVE-1\u0007", "reason": "r"}`), `dismissals[0]: advisory "CVE-1\a" has a control character`},
		{"dismissal without a reason", dismissal(`{"component": "blog", "advisory": "A", "reason": " \t"}`), `dismissals[0]: reason is missing`},
		{"dismissal reason too long", dismissal(`{"component": "blog", "advisory": "A", "reason": "` + strings.Repeat("r", 501) + `"}`), `dismissals[0]: reason is longer than 500 characters`},
		{"expiry that is neither", dismissal(`{"component": "blog", "advisory": "A", "reason": "r", "expires": "2027-02-30"}`), `dismissals[0]: expires "2027-02-30" is neither an RFC 3339 time nor a date (YYYY-MM-DD)`},
		{"expiry without a zone", dismissal(`{"component": "blog", "advisory": "A", "reason": "r", "expires": "2027-01-01T00:00:00"}`), `dismissals[0]: expires "2027-01-01T00:00:00" is neither`},
		{"dismissal twice", dismissal(`{"component": "blog", "advisory": "GHSA-abcd", "reason": "r"}, {"component": "core", "advisory": "GHSA-abcd", "reason": "r"},
		  {"component": "blog", "advisory": "ghsa-ABCD", "reason": "r"}`), `dismissals[2]: advisory ghsa-ABCD of "blog" is dismissed already by dismissals[0]`},

		{"skip without a component", skip(`{"version": "3.0.0", "reason": "r"}`), `skips[0]: component is missing`},
		{"skip of no component", skip(`{"component": "shop", "version": "3.0.0", "reason": "r"}`), `skips[0]: component "shop" is not a component of the manifest`},
		{"skip of no version", skip(`{"component": "blog", "version": "3.0", "reason": "r"}`), `skips[0]: version "3.0" is not a semantic version`},
		{"skip of the installed version", skip(`{"component": "blog", "version": "2.3.0", "reason": "r"}`), `skips[0]: version 2.3.0 is not newer than the installed 2.3.0`},
		{"skip of an older version", skip(`{"component": "blog", "version": "2.2.9", "reason": "r"}`), `skips[0]: version 2.2.9 is not newer than the installed 2.3.0`},
		{"skip without a reason", skip(`{"component": "blog", "version": "3.0.0"}`), `skips[0]: reason is missing`},
		{"skip reason too long", skip(`{"component": "blog", "version": "3.0.0", "reason": "` + strings.Repeat("r", 501) + `"}`), `skips[0]: reason is longer than 500 characters`},
		{"two skips of one component", skip(`{"component": "blog", "version": "3.0.0", "reason": "r"}, {"component": "core", "version": "3.0.0", "reason": "r"},
		  {"component": "blog", "version": "3.1.0", "reason": "r"}`), `skips[2]: component "blog" has a skip already in skips[0]: one skip a component`},
	}
	for _, tc := range cases {
		for format, parse := range map[string]func([]byte) (*Manifest, error){"json": ParseJSON, "yaml": ParseYAML} {
			t.Run(format+" "+tc.name, func(t *testing.T) {
				t.Parallel()
				_, err := parse([]byte(tc.doc))
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error = %v, want ErrInvalid containing %q", err, tc.want)
				}
			})
		}
	}
	// What is within the limits passes: 200 bytes of advisory (the limit
	// of every advisory id, readmodel.MaxAdvisoryID), 500 characters of
	// reason, a skip of a pre-release newer than installed.
	ok := doc(`"dismissals": [{"component": "blog", "advisory": "` + strings.Repeat("é", 100) + `", "reason": "` + strings.Repeat("r", 500) + `"}],
	  "skips": [{"component": "blog", "version": "2.3.1-rc.1", "reason": "` + strings.Repeat("r", 500) + `"}]`)
	if _, err := ParseJSON([]byte(ok)); err != nil {
		t.Fatalf("at the limits: %v", err)
	}
}

// Every problem is reported at once, each on its line.
func TestDecisionProblemsAllAtOnce(t *testing.T) {
	t.Parallel()
	_, err := ParseJSON([]byte(`{"policy": {"offer": "x"},
	  "components": [{"code": "core", "name": "Core", "version": "1.0.0", "policy": {"soak": "-1h"}}],
	  "dismissals": [{"component": "shop", "advisory": "A", "reason": "r"}, {"component": "core", "advisory": "", "reason": ""}],
	  "skips": [{"component": "core", "version": "0.9.0", "reason": "r"}]}`))
	want := []string{
		`components[0] ("core"): policy: soak "-1h" is not longer than zero`,
		`policy: offer "x" is not one of`,
		`dismissals[0]: component "shop" is not a component of the manifest`,
		`dismissals[1]: advisory is missing`,
		`dismissals[1]: reason is missing`,
		`skips[0]: version 0.9.0 is not newer than the installed 1.0.0`,
	}
	if err == nil || strings.Count(err.Error(), "\n  ") != len(want) {
		t.Fatalf("error = %v, want %d problems", err, len(want))
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), "\n  "+w) {
			t.Errorf("error = %v, want a line %q", err, w)
		}
	}
}

// An unknown member inside a policy, a dismissal or a skip is refused with
// its line and column, in JSON and in YAML. A name that is a member of one
// list ("reason" of a dismissal, "version" of a component) is still placed
// where it is unknown, not where it is first written.
func TestUnknownDecisionMembers(t *testing.T) {
	t.Parallel()
	jsonCases := []struct{ name, doc, want string }{
		{"in the site policy", "{\"policy\": {\"offer\": \"all\",\n  \"sok\": \"3d\"}, \"components\": []}", `unknown field "sok" at line 2, column 3`},
		{"in a component's policy", "{\"components\": [{\"code\": \"core\", \"name\": \"Core\", \"version\": \"1.0.0\",\n    \"policy\": {\"ofer\": \"all\"}}]}", `unknown field "ofer" at line 2, column 16`},
		{"reason in a component after a dismissal's", "{\"dismissals\": [{\"component\": \"core\", \"advisory\": \"A\", \"reason\": \"r\"}],\n \"components\": [{\"code\": \"core\", \"name\": \"Core\", \"version\": \"1.0.0\",\n   \"reason\": \"x\"}]}",
			`unknown field "reason" at line 3, column 4`},
		{"version in a dismissal after a component's", "{\"components\": [{\"code\": \"core\", \"name\": \"Core\", \"version\": \"1.0.0\"}],\n \"dismissals\": [{\"component\": \"core\", \"advisory\": \"A\", \"reason\": \"r\",\n  \"version\": \"1.0.0\"}]}",
			`unknown field "version" at line 3, column 3`},
		{"in a skip", "{\"components\": [],\n \"skips\": [{\"component\": \"core\", \"version\": \"2.0.0\", \"reson\": \"r\"}]}", `unknown field "reson" at line 2, column 54`},
	}
	for _, tc := range jsonCases {
		t.Run("json "+tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseJSON([]byte(tc.doc))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want ErrInvalid containing %q", err, tc.want)
			}
		})
	}
	yamlCases := []struct{ name, doc, want string }{
		{"in the site policy", "policy:\n  offer: all\n  sok: 3d\ncomponents: []\n", `unknown field "sok" at line 3, column 3`},
		{"in a component's policy", "components:\n  - code: core\n    policy:\n      ofer: all\n", `unknown field "ofer" at line 4, column 7`},
		{"in a dismissal", "components: []\ndismissals:\n  - component: core\n    advisory: A\n    version: 1.0.0\n", `unknown field "version" at line 5, column 5`},
		{"in a skip", "components: []\nskips:\n  - {component: core, version: 2.0.0, reson: r}\n", `unknown field "reson" at line 3, column 39`},
	}
	for _, tc := range yamlCases {
		t.Run("yaml "+tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseYAML([]byte(tc.doc))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error = %q, want ErrInvalid containing %q, on one line", err, tc.want)
			}
		})
	}
}

// A policy on its own (components sync --policy) is read with the
// manifest's strictness.
func TestParsePolicy(t *testing.T) {
	t.Parallel()
	p, err := ParsePolicy([]byte(`{"offer": "security", "soak": "72h"}`))
	if err != nil || p != (release.Policy{Offer: release.OfferSecurity, Soak: "72h"}) {
		t.Fatalf("policy = %+v, %v", p, err)
	}
	for body, want := range map[string]string{
		`{"offer": "security", "sok": "72h"}`: `unknown field "sok" at line 1, column 23`,
		`{"soak": "x"}`:                       `soak "x" is not a duration`,
		`{"offer": "all"} {}`:                 `unexpected data after the policy at line 1, column 18`,
		`"security"`:                          `the policy at line 1, column 1 must be an object, not a JSON string`,
		`{"offer": `:                          `malformed JSON at line 1, column 11`,
		``:                                    `empty body`,
	} {
		if _, err := ParsePolicy([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePolicy(%q) = %v, want %q", body, err, want)
		}
	}
}
