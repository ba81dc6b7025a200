package npm_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/npm"
)

// An added dependency's document is read for its publish times alone:
// what DecodeTimes allocates follows its versions' count (their times),
// not the document, whose manifests are skipped undecoded; here under a
// twentieth of the document, and under a fifth of what decoding it as a
// Package allocates. Not
// parallel: the runtime's count of allocations is the whole process's.
func TestDecodingADependencysTimesFollowsItsVersions(t *testing.T) {
	var times *npm.Times
	var err error
	doc := newBigDocument(bigSize)
	n := allocated(func() { times, err = npm.DecodeTimes(doc, npm.DefaultMaxDocument) })
	if err != nil {
		t.Fatal(err)
	}
	if times.Name != "big" || len(times.Published) != doc.versions || times.Latest == "" ||
		!times.Created.Equal(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("name %q, %d versions' times of %d, latest %q, created %v", times.Name, len(times.Published), doc.versions, times.Latest, times.Created)
	}
	whole := allocated(func() { _, err = npm.DecodePackage(newBigDocument(bigSize), npm.DefaultMaxDocument) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d versions, %d MiB: %.2f MiB allocated for the times, %.1f MiB for the package", doc.versions, bigSize>>20,
		float64(n)/(1<<20), float64(whole)/(1<<20))
	if n > bigSize/20 || n > whole/5 {
		t.Errorf("reading the times of a %d MiB document allocated %.2f MiB, the package %.1f MiB; want under a twentieth of the document, a fifth of the package",
			bigSize>>20, float64(n)/(1<<20), float64(whole)/(1<<20))
	}
}

// A document without time.created takes its earliest version's time as
// the package's first publish; "modified" is no version; a document that
// is not a package's is refused.
func TestDecodeTimes(t *testing.T) {
	t.Parallel()
	got, err := npm.DecodeTimes(strings.NewReader(`{"name": "p", "dist-tags": {"latest": "1.1.0"}, "versions": {"1.0.0": {"x": [1, {"y": 2}]}},
		"time": {"modified": "2026-03-01T00:00:00.000Z", "1.1.0": "2026-02-01T00:00:00.000Z", "1.0.0": "2026-01-01T00:00:00.000Z"}}`), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Created.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) || len(got.Published) != 2 || got.Latest != "1.1.0" {
		t.Errorf("%+v", got)
	}
	if _, err := npm.DecodeTimes(strings.NewReader(`{"versions": {}}`), 1<<20); !errors.Is(err, npm.ErrDocument) {
		t.Errorf("a document without a name: %v", err)
	}
	if _, err := npm.DecodeTimes(strings.NewReader(`{"name": "p", "readme": "`+strings.Repeat("a", 2000)+`"}`), 1000); !errors.Is(err, npm.ErrTooLarge) {
		t.Errorf("past the cap: %v", err)
	}
}
