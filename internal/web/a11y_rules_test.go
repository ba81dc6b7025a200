package web_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// a11yGoodPage passes every rule of the audit in both colour schemes. Each case
// of TestAuditRulesCatchViolations breaks it in one place.
const a11yGoodPage = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Good page</title>
<style>
body { color: #222; background: #fff; padding: 1rem; }
a { color: #1f5fae; }
.soft { color: #595959; }
@media (prefers-color-scheme: dark) { body { color: #eee; background: #111; } a { color: #79b8ff; } .soft { color: #aaa; } }
</style>
</head>
<body>
<a href="#main">Skip to main content</a>
<header><a href="/">Home</a><nav aria-label="Main"><a href="/a">A page</a></nav></header>
<main id="main">
<h1>Title</h1>
<section aria-labelledby="s1"><h2 id="s1">Section</h2><p class="soft">Some text.</p></section>
<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="A dot" width="4" height="4">
<label for="q">Search</label> <input id="q" value="words"> <button>Go</button>
<div role="alert"><p>An alert outside nothing.</p></div>
</main>
<footer><p>Footer text</p></footer>
</body>
</html>`

// The audit finds each rule's violation on a page that has it, and only
// that one: a checker that cannot fail proves nothing.
func TestAuditRulesCatchViolations(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rule     string
		old, new string
		// also are rules that the change breaks too (axe's
		// landmark-unique also counts unnamed landmarks of one role).
		also []string
		// in is words one violation must contain.
		in string
	}{
		{rule: "", old: "", new: ""}, // the good page itself: no violation
		{rule: ruleHTMLHasLang, old: `<html lang="en">`, new: `<html>`},
		{rule: ruleDocumentTitle, old: `<title>Good page</title>`, new: `<title> </title>`},
		{rule: ruleOneMain, old: `<main id="main">`, new: `<main id="main"></main><main>`, also: []string{ruleLandmarkUnique}},
		{rule: ruleOneMain, old: `<main id="main">`, new: `<main id="main" role="region" aria-label="Content">`},
		{rule: ruleOneBanner, old: `<footer>`, new: `<header><p>Second header</p></header><footer>`, also: []string{ruleLandmarkUnique}},
		{rule: ruleOneBanner, old: `<header>`, new: `<div>`, also: []string{ruleRegion}},
		{rule: ruleOneContentinfo, old: `</body>`, new: `<footer><p>Second footer</p></footer></body>`, also: []string{ruleLandmarkUnique}},
		{rule: ruleLandmarkUnique, old: `<h1>Title</h1>`, new: `<h1>Title</h1><section aria-label="Section"><p>x</p></section>`},
		{rule: ruleLandmarkUnique, old: `</header>`, new: `<nav aria-label="Main"><a href="/b">B page</a></nav></header>`},
		{rule: ruleRegion, old: `</body>`, new: `<p>Loose text</p></body>`},
		{rule: ruleButtonName, old: `<button>Go</button>`, new: `<button>Go</button><button></button>`},
		{rule: ruleLinkName, old: `<a href="/">Home</a>`, new: `<a href="/"><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt=""></a>`},
		{rule: ruleImageAlt, old: `alt="A dot"`, new: ``},
		{rule: ruleLabel, old: `<label for="q">Search</label>`, new: ``},
		{rule: ruleLabel, old: `<button>Go</button>`, new: `<button>Go</button><select><option>One</option></select>`},
		{rule: ruleDuplicateID, old: `<h2 id="s1">`, new: `<h2 id="s1"><span id="s1"></span>`},
		{rule: ruleHeadingOrder, old: `<h2 id="s1">Section</h2>`, new: `<h3 id="s1">Section</h3>`},
		{rule: rulePageHasHeadingOne, old: `<h1>Title</h1>`, new: `<h2>Title</h2>`},
		{rule: rulePageHasHeadingOne, old: `<h1>Title</h1>`, new: `<h1>Title</h1><h1>Again</h1>`},
		// Too faint in the light scheme only, then in the dark one only.
		{rule: ruleColorContrast, old: `.soft { color: #595959; }`, new: `.soft { color: #999; }`, in: "light scheme"},
		{rule: ruleColorContrast, old: `.soft { color: #aaa; }`, new: `.soft { color: #555; }`, in: "dark scheme"},
		// Text made faint by its parent's opacity.
		{rule: ruleColorContrast, old: `<p class="soft">`, new: `<p class="soft" style="opacity: 0.5">`},
		// A text that shares its parent with an element.
		{rule: ruleColorContrast, old: `<p class="soft">Some text.</p>`, new: `<p style="color: #aaa; background: #fff; padding: 2px"><b style="color: #222">Bold</b> faint words</p>`,
			in: `"faint words": rgb(170, 170, 170) on rgb(255, 255, 255) is 2.32:1`},
		// A value in a form control counts as text.
		{rule: ruleColorContrast, old: `<input id="q" value="words">`, new: `<input id="q" value="words" style="color: #aaa; background: #fff">`},
	}
	pages := map[string]string{}
	for i, c := range cases {
		if c.old != "" && !strings.Contains(a11yGoodPage, c.old) {
			t.Fatalf("case %d: %q is not in the good page", i, c.old)
		}
		pages["/"+string(rune('a'+i))] = strings.Replace(a11yGoodPage, c.old, c.new, 1)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)

	ctx := browser(t)
	for i, c := range cases {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"+string(rune('a'+i))), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
			t.Fatal(err)
		}
		var rules []string
		vs := a11yAudit(t, ctx)
		for _, v := range vs {
			if !slices.Contains(rules, v.rule) {
				rules = append(rules, v.rule)
			}
		}
		want := []string{}
		if c.rule != "" {
			want = append([]string{c.rule}, c.also...)
		}
		slices.Sort(rules)
		slices.Sort(want)
		if !slices.Equal(rules, want) {
			t.Errorf("case %d (%s: %q -> %q): found %v, want %v", i, c.rule, c.old, c.new, vs, want)
		}
		if c.in != "" && !slices.ContainsFunc(vs, func(v a11yViolation) bool { return strings.Contains(v.detail, c.in) }) {
			t.Errorf("case %d: no violation says %q: %v", i, c.in, vs)
		}
	}
}
