package updatecheck

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// since is a component's exposure as the catalog, the detail page and the
// summary's items read it; they must agree.
func (b *bundle) since(code string) *time.Time {
	b.t.Helper()
	ctx := context.Background()
	d, err := b.reads.Detail(ctx, code)
	if err != nil {
		b.t.Fatal(err)
	}
	entries, _, err := catalog.ReadPage(ctx, b.store, store.CatalogFilter{Search: code, Limit: 100})
	if err != nil {
		b.t.Fatal(err)
	}
	i := slices.IndexFunc(entries, func(e store.CatalogEntry) bool { return e.Code == code })
	if i < 0 {
		b.t.Fatalf("%s is not in the catalog", code)
	}
	if !sameTime(entries[i].SecuritySince, d.SecuritySince) {
		b.t.Fatalf("%s: catalog says exposed since %v, detail %v", code, entries[i].SecuritySince, d.SecuritySince)
	}
	sum, err := b.store.Summary(ctx, store.LocalSite, readmodel.DevSeparate)
	if err != nil {
		b.t.Fatal(err)
	}
	for _, a := range sum.Attention {
		if a.Code == code && !sameTime(a.SecuritySince, d.SecuritySince) {
			b.t.Fatalf("%s: summary says exposed since %v, detail %v", code, a.SecuritySince, d.SecuritySince)
		}
	}
	return d.SecuritySince
}

func sameTime(a, b *time.Time) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Equal(*b)
}

// dbNow is the database's clock, which stamps first-seen times.
func (b *bundle) dbNow() time.Time {
	var now time.Time
	b.db.QueryRow(b.t, "SELECT clock_timestamp()").Scan(&now)
	return now
}

// age moves every first-seen time of code back by d, as if the problems
// had been known that much longer.
func (b *bundle) age(code string, d time.Duration) {
	b.db.MustExec(b.t, "UPDATE security_problems SET first_seen_at = first_seen_at - make_interval(secs => $2) WHERE code = $1",
		code, d.Seconds())
}

// The exposure clock: a security problem is stamped when a result first
// has it; evaluating again (a check, a newer security release, a manifest
// sync that upgrades past the oldest fix) keeps the oldest stamp of the
// problems still open; a dismissed advisory does not count; a problem that
// goes away and comes back starts again. The catalog, the detail page, the
// summary and its oldest_security_since agree.
func TestExposureClock(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	b.standardSite(p)
	ctx := context.Background()

	before := b.dbNow()
	if res := b.run(lease.Operator); !res.Status.RanToEnd() {
		t.Fatalf("first check: %+v", res)
	}
	first := b.since("blog")
	if first == nil || first.Before(before) || first.After(b.dbNow()) {
		t.Fatalf("blog exposed since %v, want the first check's time (after %v)", first, before)
	}
	if s := b.since("forms"); s != nil {
		t.Fatalf("forms, up to date, exposed since %v", s)
	}

	// Three days later a newer security release appears: the clock keeps
	// the oldest fix not installed (the advisory, known for a little less
	// long, does not decide).
	aged := first.Add(-72 * time.Hour)
	b.db.MustExec(t, `UPDATE security_problems SET first_seen_at = CASE kind WHEN 'release' THEN $1::timestamptz
		ELSE $1::timestamptz + interval '1 hour' END WHERE code = 'blog'`, aged)
	b.age("gallery", 2*time.Hour)
	p.Set("/acme.json", doc(11, map[string]string{"blog": `{"releases": [
		{"version": "2.4.0", "security": true, "severity": "high", "requires_core": ">=1.8.0"},
		{"version": "2.5.0", "security": true, "severity": "critical", "requires_core": ">=1.8.0"}],
		"advisories": [{"id": "ACME-1", "severity": "critical", "affected": "<2.4.0", "fixed_in": "2.4.0"}]}`,
		"gallery": pkgGallery, "forms": pkgUpToDate}))
	if res := b.run(lease.Operator); !res.Status.RanToEnd() {
		t.Fatalf("second check: %+v", res)
	}
	if s := b.since("blog"); s == nil || !s.Equal(aged) {
		t.Fatalf("after a newer security release blog is exposed since %v, want %v", s, aged)
	}
	sum, err := b.store.Summary(ctx, store.LocalSite, readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	if sum.OldestSecuritySince == nil || !sum.OldestSecuritySince.Equal(aged) || sum.OldestSecuritySeconds < 72*3600 {
		t.Fatalf("summary: oldest security problem since %v (%.0f s), want %v", sum.OldestSecuritySince, sum.OldestSecuritySeconds, aged)
	}

	// The site installs 2.4.0 (a manifest sync evaluates it from the stored
	// document): ACME-1 and the 2.4.0 fix are gone, 2.5.0 was known since
	// the second check and keeps that stamp.
	b.db.MustExec(t, "UPDATE security_problems SET first_seen_at = $1 WHERE code = 'blog' AND problem = '2.5.0'", aged.Add(time.Hour))
	b.sync(
		manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json"},
		manifest.Component{Code: "blog", Name: "Blog", Version: "2.4.0", Source: p.URL + "/acme.json"},
		manifest.Component{Code: "gallery", Name: "Gallery", Version: "3.0.0", Source: p.URL + "/acme.json"},
		manifest.Component{Code: "forms", Name: "Forms", Version: "1.0.0", Source: p.URL + "/acme.json"},
	)
	if s := b.since("blog"); s == nil || !s.Equal(aged.Add(time.Hour)) {
		t.Fatalf("after upgrading to 2.4.0 blog is exposed since %v, want 2.5.0's stamp %v", s, aged.Add(time.Hour))
	}
	var problems []string
	b.db.QueryRow(t, "SELECT array_agg(kind || ':' || problem ORDER BY kind, problem) FROM security_problems WHERE code = 'blog'").Scan(&problems)
	if fmt.Sprint(problems) != "[release:2.5.0]" {
		t.Fatalf("blog's recorded problems at 2.4.0: %v", problems)
	}

	// A dismissed advisory does not count; restored, it counts from when it
	// was first seen. Gallery gets a second advisory, known for less long.
	gallerySince := b.since("gallery")
	if gallerySince == nil {
		t.Fatal("gallery, vulnerable, has no exposure")
	}
	twoAdvisories := `{"releases": [{"version": "3.0.0"}], "advisories": [
		{"id": "ACME-2", "severity": "high", "affected": "<=3.0.0"},
		{"id": "ACME-3", "severity": "low", "affected": "<=3.0.0", "fixed_in": "3.0.1"}]}`
	p.Set("/acme.json", doc(12, map[string]string{"blog": `{"releases": [{"version": "2.4.0"},
		{"version": "2.5.0", "security": true, "severity": "critical"}]}`, "gallery": twoAdvisories, "forms": pkgUpToDate}))
	if res := b.run(lease.Operator); !res.Status.RanToEnd() {
		t.Fatalf("check with a second advisory: %+v", res)
	}
	var acme3 time.Time
	b.db.QueryRow(t, "SELECT first_seen_at FROM security_problems WHERE code = 'gallery' AND problem = 'ACME-3'").Scan(&acme3)
	if s := b.since("gallery"); s == nil || !s.Equal(*gallerySince) || !acme3.After(*gallerySince) {
		t.Fatalf("gallery exposed since %v (ACME-3 seen %v), want ACME-2's %v", s, acme3, gallerySince)
	}
	if err := dismissErr(b.dismissals.Dismiss(ctx, store.NewDismissal{Site: store.LocalSite, Code: "gallery", AdvisoryID: "ACME-2", Reason: "accepted for the test"})); err != nil {
		t.Fatal(err)
	}
	if s := b.since("gallery"); s == nil || !s.Equal(acme3) {
		t.Fatalf("ACME-2 dismissed: gallery exposed since %v, want ACME-3's %v", s, acme3)
	}
	if err := dismissErr(b.dismissals.Dismiss(ctx, store.NewDismissal{Site: store.LocalSite, Code: "gallery", AdvisoryID: "ACME-3", Reason: "accepted for the test"})); err != nil {
		t.Fatal(err)
	}
	if s := b.since("gallery"); s != nil {
		t.Fatalf("every advisory of gallery is dismissed, yet it is exposed since %v", s)
	}
	for _, id := range []string{"ACME-2", "ACME-3"} {
		if err := b.dismissals.Undismiss(ctx, store.LocalSite, "gallery", id, 0); err != nil {
			t.Fatal(err)
		}
	}
	if s := b.since("gallery"); s == nil || !s.Equal(*gallerySince) {
		t.Fatalf("restored advisories: gallery exposed since %v, want %v", s, gallerySince)
	}

	// The publisher withdraws blog's security release: blog is no longer
	// exposed. It comes back: the clock starts again.
	p.Set("/acme.json", doc(13, map[string]string{"blog": `{"releases": [{"version": "2.4.0"}]}`, "gallery": pkgGallery, "forms": pkgUpToDate}))
	if res := b.run(lease.Operator); !res.Status.RanToEnd() {
		t.Fatalf("third check: %+v", res)
	}
	if s := b.since("blog"); s != nil {
		t.Fatalf("blog has no security problem left, yet it is exposed since %v", s)
	}
	again := b.dbNow()
	p.Set("/acme.json", doc(14, map[string]string{"blog": `{"releases": [{"version": "2.4.0"},
		{"version": "2.5.0", "security": true, "severity": "critical"}]}`, "gallery": pkgGallery, "forms": pkgUpToDate}))
	if res := b.run(lease.Operator); !res.Status.RanToEnd() {
		t.Fatalf("fourth check: %+v", res)
	}
	if s := b.since("blog"); s == nil || s.Before(again) {
		t.Fatalf("blog's security release came back: exposed since %v, want a fresh stamp after %v", s, again)
	}

	// A component removed from the site takes its stamps with it.
	b.sync(manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json"})
	if res := b.run(lease.Operator); !res.Status.RanToEnd() {
		t.Fatalf("check after removal: %+v", res)
	}
	var left int
	b.db.QueryRow(t, "SELECT count(*) FROM security_problems").Scan(&left)
	if left != 0 {
		t.Fatalf("%d security problems of removed components are still recorded", left)
	}
}

// The summary names the components that need attention, most urgent
// first: an advisory with no fix, then security updates by severity, then
// vulnerable versions, by name within each; five of them, the others
// counted. Each item carries what the pages need to name the problem.
func TestSummaryNamesAttention(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	p.Set("/core.json", doc(1, map[string]string{"core": pkgCore}))
	p.Set("/acme.json", doc(1, map[string]string{
		"blog": pkgBlog, // security (high) with an advisory (critical, fixed in 2.4.0)
		"gallery": `{"releases": [{"version": "3.0.0"}], "advisories": [
			{"id": "G-1", "severity": "high", "affected": "<=3.0.0", "fixed_in": "3.0.1"},
			{"id": "G-2", "severity": "low", "affected": "<=3.0.0", "summary": "Metadata leak"}]}`, // no fix
		"shop":      `{"releases": [{"version": "2.0.0", "security": true, "severity": "critical", "summary": "Fixes SQL injection"}]}`,
		"forum":     `{"releases": [{"version": "1.1.0", "security": true, "severity": "low"}]}`,
		"wiki":      `{"releases": [{"version": "1.1.0", "security": true}]}`,
		"chat":      `{"releases": [{"version": "1.0.0"}], "advisories": [{"id": "C-1", "severity": "medium", "affected": "<=1.0.0", "fixed_in": "1.0.1"}]}`,
		"albums":    `{"releases": [{"version": "1.0.0"}], "advisories": [{"id": "A-1", "severity": "medium", "affected": "<=1.0.0", "fixed_in": "1.0.1"}]}`,
		"forms":     pkgUpToDate,
		"analytics": pkgUpToDate,
	}))
	components := []manifest.Component{{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json"}}
	for code, version := range map[string]string{"blog": "2.3.0", "gallery": "3.0.0", "shop": "1.0.0", "forum": "1.0.0",
		"wiki": "1.0.0", "chat": "1.0.0", "albums": "1.0.0", "forms": "1.0.0", "analytics": "1.0.0"} {
		components = append(components, manifest.Component{Code: code, Name: strings.ToUpper(code[:1]) + code[1:], Version: version, Source: p.URL + "/acme.json"})
	}
	components = append(components, manifest.Component{Code: "legacy", Name: "Aardvark theme", Version: "1.0.0"}) // no source
	b.sync(components...)
	if res := b.run(lease.Operator); !res.Status.RanToEnd() {
		t.Fatalf("check: %+v", res)
	}
	sum, err := b.store.Summary(context.Background(), store.LocalSite, readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, a := range sum.Attention {
		order = append(order, a.Code+":"+string(a.Kind))
	}
	// wiki's security release names no severity: last among them.
	want := "[gallery:vulnerable_no_fix shop:security blog:security forum:security wiki:security]"
	if fmt.Sprint(order) != want || sum.AttentionMore != 2 {
		t.Fatalf("attention = %v and %d more, want %s and 2 more (albums, chat)", order, sum.AttentionMore, want)
	}
	str := func(s *string) string {
		if s == nil {
			return "<nil>"
		}
		return *s
	}
	gallery, blog, shop := sum.Attention[0], sum.Attention[2], sum.Attention[1]
	if a := gallery.Advisory; a == nil || a.ID != "G-2" || a.FixedIn != nil || a.Summary != "Metadata leak" || gallery.UpdateVersion != nil {
		t.Errorf("gallery's advisory should be the one with no fix: %+v %+v", gallery, a)
	}
	if a, r := blog.Advisory, blog.SecurityRelease; a == nil || a.ID != "ACME-1" || str(a.FixedIn) != "2.4.0" || a.Severity != "critical" ||
		r == nil || r.Version != "2.4.0" || r.Severity != "high" || str(blog.UpdateVersion) != "2.4.0" || blog.Installed != "2.3.0" || blog.Name != "Blog" {
		t.Errorf("blog: %+v advisory %+v release %+v", blog, a, r)
	}
	if r := shop.SecurityRelease; r == nil || r.Summary != "Fixes SQL injection" || shop.Advisory != nil || shop.SecuritySince == nil {
		t.Errorf("shop: %+v release %+v", shop, r)
	}
	for _, a := range sum.Attention {
		if a.SecuritySince == nil || sum.OldestSecuritySince == nil || a.SecuritySince.Before(*sum.OldestSecuritySince) {
			t.Errorf("%s exposed since %v, oldest %v", a.Code, a.SecuritySince, sum.OldestSecuritySince)
		}
	}

	// The catalog's attention filter lists the same components, and its
	// default order puts them first.
	entries, counts, err := catalog.ReadPage(context.Background(), b.store, store.CatalogFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if counts.Attention != 7 || counts.Security != sum.SecurityUpdates || counts.All != sum.Components {
		t.Errorf("catalog counts %+v, summary %+v", counts, sum)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Code)
	}
	// Needing action by name, then updates (core), then up to date, then
	// what has no update source.
	if want := "[albums blog chat forum gallery shop wiki core analytics forms legacy]"; fmt.Sprint(got) != want {
		t.Errorf("catalog order %v, want %s", got, want)
	}
}

// next_check_at is when the schedule this process runs fires next, and
// only while it runs.
func TestSummaryNextCheck(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if s, err := b.reads.Summary(ctx); err != nil || s.NextCheckAt != nil {
		t.Fatalf("no schedule runs: next check %v, %v", s.NextCheckAt, err)
	}
	_, cancel, done := b.scheduler() // fires at midnight on 1 January
	var s readmodel.Summary
	wait.For(t, "the summary's next check, once the schedule runs", wait.Guard, func() (bool, error) {
		var err error
		s, err = b.reads.Summary(ctx)
		return err == nil && s.NextCheckAt != nil, err
	})
	now := time.Now().UTC()
	want := time.Date(now.Year()+1, 1, 1, 0, 0, 0, 0, time.UTC)
	if s.NextCheckAt == nil || !s.NextCheckAt.Equal(want) || s.NextCheckAt.Location() != time.UTC {
		t.Fatalf("next check %v, want %v", s.NextCheckAt, want)
	}
	cancel()
	<-done
	if s, err := b.reads.Summary(ctx); err != nil || s.NextCheckAt != nil {
		t.Fatalf("after the schedule stopped: next check %v, %v", s.NextCheckAt, err)
	}
}

// dismissErr is Dismiss's error alone.
func dismissErr(_ store.Dismissal, err error) error { return err }
