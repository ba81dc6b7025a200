package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// An accessibility audit on Chromium's own engine. axe-core cannot be
// installed under the CI rule (Debian packages and the Go module proxy
// only), so the audit reads what Chromium computes: the accessibility tree
// (roles and accessible names, as screen readers get them), the DOM, and
// the background colours behind each text (CSS.getBackgroundColors, what
// DevTools' contrast checker uses). Each rule is named after the axe-core
// rule it stands for; docs/accessibility.md lists them and what they leave
// out.

// The rules, by axe-core's rule ids.
const (
	ruleLandmarkUnique    = "landmark-unique"                   // landmarks of one role have different names
	ruleOneMain           = "landmark-one-main"                 // exactly one main
	ruleOneBanner         = "landmark-no-duplicate-banner"      // one banner (the header); axe: at most one
	ruleOneContentinfo    = "landmark-no-duplicate-contentinfo" // at most one contentinfo
	ruleRegion            = "region"                            // all content inside a landmark
	ruleButtonName        = "button-name"
	ruleLinkName          = "link-name"
	ruleImageAlt          = "image-alt"
	ruleLabel             = "label" // form controls have a name
	ruleDuplicateID       = "duplicate-id"
	ruleHeadingOrder      = "heading-order"        // no skipped levels
	rulePageHasHeadingOne = "page-has-heading-one" // exactly one h1 (axe: at least one)
	ruleHTMLHasLang       = "html-has-lang"
	ruleDocumentTitle     = "document-title"
	ruleColorContrast     = "color-contrast" // WCAG AA: 4.5:1, 3:1 for large text
)

// a11yViolation is one failed check.
type a11yViolation struct {
	rule, detail string
}

func (v a11yViolation) String() string { return v.rule + ": " + v.detail }

// a11yAudit runs every rule on the page shown in ctx, colour contrast in the
// light and the dark colour scheme; it leaves the page in the light one.
func a11yAudit(t *testing.T, ctx context.Context) []a11yViolation {
	t.Helper()
	vs := a11yTreeRules(t, ctx)
	vs = append(vs, a11yDocumentRules(t, ctx)...)
	for _, scheme := range []string{"dark", "light"} {
		if err := chromedp.Do(ctx, colorScheme(scheme)); err != nil {
			t.Fatal(err)
		}
		for _, v := range a11yContrast(t, ctx) {
			v.detail = scheme + " scheme: " + v.detail
			vs = append(vs, v)
		}
	}
	return vs
}

// axNode is a node of Chromium's accessibility tree, decoded.
type axNode struct {
	role, name string
	ignored    bool
	props      map[string]string
	parent     *axNode
	children   []*axNode
}

// axTree fetches the tree and returns its nodes in document order (a
// depth-first walk from the root), ignored ones included.
func axTree(t *testing.T, ctx context.Context) []*axNode {
	t.Helper()
	res, err := chromedp.Run(ctx, chromedp.Action[*accessibility.GetFullAXTreeResult](
		func(ctx context.Context, tg *chromedp.Target) (*accessibility.GetFullAXTreeResult, error) {
			r, err := cdp.Call(ctx, tg, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
			return &r, err
		}))
	if err != nil {
		t.Fatalf("accessibility tree: %v", err)
	}
	byID := map[accessibility.NodeID]*axNode{}
	for _, n := range res.Nodes {
		a := &axNode{role: axString(n.Role), name: axString(n.Name), ignored: n.Ignored, props: map[string]string{}}
		for _, p := range n.Properties {
			a.props[string(p.Name)] = axString(p.Value)
		}
		byID[n.NodeID] = a
	}
	var root *axNode
	for _, n := range res.Nodes {
		a := byID[n.NodeID]
		if p, ok := byID[n.ParentID]; ok {
			a.parent = p
		} else if root == nil {
			root = a
		}
		for _, c := range n.ChildIDs {
			if ch, ok := byID[c]; ok {
				a.children = append(a.children, ch)
			}
		}
	}
	if root == nil {
		t.Fatal("accessibility tree without a root")
	}
	var order []*axNode
	var walk func(*axNode)
	walk = func(a *axNode) {
		order = append(order, a)
		for _, c := range a.children {
			walk(c)
		}
	}
	walk(root)
	return order
}

// axString is an accessibility value as text: a string as it is, a number
// or a boolean in JSON.
func axString(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(v.Value, &s) == nil {
		return strings.TrimSpace(s)
	}
	return strings.TrimSpace(string(v.Value))
}

// landmark reports whether a is a landmark: region and form only when
// named, as in ARIA and axe.
func (a *axNode) landmark() bool {
	switch a.role {
	case "banner", "complementary", "contentinfo", "main", "navigation", "search":
		return true
	case "region", "form":
		return a.name != ""
	}
	return false
}

// regionLike reports whether content inside a counts as placed, for axe's
// region rule: a landmark, a live region (alert, status, log, aria-live),
// or a button (axe does not look inside buttons).
func (a *axNode) regionLike() bool {
	live := a.props["live"]
	return a.landmark() || a.role == "alert" || a.role == "status" || a.role == "log" || a.role == "button" ||
		live == "polite" || live == "assertive"
}

// inRegion reports whether a or an ancestor is regionLike, or a is inside
// a skip link (a link to a fragment of this page).
func (a *axNode) inRegion(page string) bool {
	for n := a; n != nil; n = n.parent {
		if n.regionLike() || n.role == "link" && isSkipLink(n.props["url"], page) {
			return true
		}
	}
	return false
}

func isSkipLink(href, page string) bool {
	base, frag, ok := strings.Cut(href, "#")
	pageBase, _, _ := strings.Cut(page, "#")
	return ok && frag != "" && base == pageBase
}

// named roles: an element of the role needs a non-empty accessible name.
var namedRoles = map[string]string{
	"button": ruleButtonName, "link": ruleLinkName, "image": ruleImageAlt, "img": ruleImageAlt,
	"textbox": ruleLabel, "searchbox": ruleLabel, "combobox": ruleLabel, "listbox": ruleLabel,
	"checkbox": ruleLabel, "radio": ruleLabel, "spinbutton": ruleLabel, "slider": ruleLabel, "switch": ruleLabel,
}

// a11yTreeRules checks the rules that read the accessibility tree.
func a11yTreeRules(t *testing.T, ctx context.Context) []a11yViolation {
	t.Helper()
	page, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	var vs []a11yViolation
	add := func(rule, format string, args ...any) {
		vs = append(vs, a11yViolation{rule, fmt.Sprintf(format, args...)})
	}
	landmarks := map[string]map[string]int{} // role -> name -> count
	count := map[string]int{}
	var levels []int
	for _, a := range axTree(t, ctx) {
		if a.ignored {
			continue
		}
		if a.landmark() {
			if landmarks[a.role] == nil {
				landmarks[a.role] = map[string]int{}
			}
			landmarks[a.role][a.name]++
			count[a.role]++
		}
		if rule, ok := namedRoles[a.role]; ok && a.name == "" {
			add(rule, "a %s has no accessible name%s", a.role, axWhere(a))
		}
		if a.role == "heading" {
			level, err := strconv.Atoi(a.props["level"])
			if err != nil {
				add(ruleHeadingOrder, "heading %q has no level", a.name)
				continue
			}
			if n := len(levels); n > 0 && level > levels[n-1]+1 {
				add(ruleHeadingOrder, "heading %q is h%d after h%d", a.name, level, levels[n-1])
			}
			levels = append(levels, level)
		}
		if (a.role == "StaticText" && a.name != "" || a.role == "image" || a.role == "img") && !a.inRegion(page) {
			add(ruleRegion, "%s %q is outside every landmark", a.role, a.name)
		}
	}
	for role, names := range landmarks {
		for name, n := range names {
			if n > 1 {
				add(ruleLandmarkUnique, "%d %s landmarks are named %q", n, role, name)
			}
		}
	}
	if count["main"] != 1 {
		add(ruleOneMain, "%d main landmarks, want 1", count["main"])
	}
	if count["banner"] != 1 {
		add(ruleOneBanner, "%d banner landmarks, want 1", count["banner"])
	}
	if count["contentinfo"] > 1 {
		add(ruleOneContentinfo, "%d contentinfo landmarks, want at most 1", count["contentinfo"])
	}
	h1 := 0
	for _, l := range levels {
		if l == 1 {
			h1++
		}
	}
	if h1 != 1 {
		add(rulePageHasHeadingOne, "%d h1 headings, want 1", h1)
	}
	return vs
}

// axWhere names where a node is: its nearest named ancestor.
func axWhere(a *axNode) string {
	for n := a.parent; n != nil; n = n.parent {
		if n.name != "" {
			return fmt.Sprintf(" (inside %s %q)", n.role, n.name)
		}
	}
	return ""
}

// a11yDocumentRules checks the rules that read the DOM: lang, title, ids.
func a11yDocumentRules(t *testing.T, ctx context.Context) []a11yViolation {
	t.Helper()
	type doc struct {
		Lang, Title string
		Dups        []string
	}
	d, err := chromedp.Run(ctx, chromedp.Evaluate[doc](`(() => {
		const seen = new Map();
		for (const e of document.querySelectorAll('[id]')) seen.set(e.id, (seen.get(e.id) || 0) + 1);
		return {Lang: document.documentElement.lang.trim(), Title: document.title.trim(),
			Dups: [...seen].filter(([, n]) => n > 1).map(([id]) => id)};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	var vs []a11yViolation
	if d.Lang == "" {
		vs = append(vs, a11yViolation{ruleHTMLHasLang, "<html> has no lang"})
	}
	if d.Title == "" {
		vs = append(vs, a11yViolation{ruleDocumentTitle, "the document has no title"})
	}
	for _, id := range d.Dups {
		vs = append(vs, a11yViolation{ruleDuplicateID, fmt.Sprintf("id %q is used more than once", id)})
	}
	return vs
}
