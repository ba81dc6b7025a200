package web_test

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"
)

// The colour-contrast rule of the audit (a11y_test.go): Chromium says
// which colours are behind each text (CSS.getBackgroundColors, the
// computation of DevTools' contrast checker); WCAG's formula says whether
// the text stands out enough.

// WCAG AA's minimum contrast ratios, for normal and for large text.
const contrastNormal, contrastLarge = 4.5, 3.0

// textElement is an element with visible text of its own, as the page
// script finds it (markText).
type textElement struct {
	Text, Color string
	// Background is a form control's own background colour: Chromium
	// finds none behind a value, which is drawn inside the control.
	Background string
	Opacity    float64
}

// markText marks every text that shows on the page (data-a11y-text),
// leaving out what nobody sees (hidden, or clipped to a pixel like
// .visually-hidden) and disabled controls (exempt in WCAG), and returns the
// marked elements in document order with their text colour and the opacity
// that they and their ancestors apply. Chromium finds the background of an
// element whose one child is its text, so a text that shares its parent is
// wrapped in a span for the time of the audit (unmarkText unwraps it).
const markText = `(() => {
	const hidden = e => {
		if (!e.checkVisibility({visibilityProperty: true, opacityProperty: true})) return true;
		for (let a = e; a; a = a.parentElement) {
			const s = getComputedStyle(a), r = a.getBoundingClientRect();
			if (s.overflow !== 'visible' && (r.width <= 1 || r.height <= 1)) return true;
			if (s.clipPath === 'inset(50%)' || s.clip === 'rect(0px, 0px, 0px, 0px)') return true;
		}
		return false;
	};
	const texts = [];
	const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (let n = walker.nextNode(); n; n = walker.nextNode()) if (n.data.trim()) texts.push(n);
	for (const n of texts) {
		const p = n.parentElement;
		if (!p || p.closest('script, style, option, optgroup, textarea, :disabled, [aria-disabled="true"]') || hidden(p)) continue;
		let e = p;
		if (p.childNodes.length > 1) {
			e = document.createElement('span');
			e.setAttribute('data-a11y-wrap', '');
			n.replaceWith(e);
			e.append(n);
		}
		e.setAttribute('data-a11y-text', '');
	}
	// A checkbox's or radio's value is sent, never shown: its label is the text.
	for (const e of document.querySelectorAll('input:not([type=hidden]):not([type=checkbox]):not([type=radio]):not(:disabled), select:not(:disabled), textarea:not(:disabled)')) {
		if (e.value && !hidden(e)) e.setAttribute('data-a11y-text', '');
	}
	return [...document.querySelectorAll('[data-a11y-text]')].map(e => {
		let opacity = 1;
		for (let a = e; a; a = a.parentElement) opacity *= parseFloat(getComputedStyle(a).opacity);
		const control = e.matches('input, select, textarea');
		const text = e.matches('select') ? e.selectedOptions[0]?.text || '' : control ? e.value : e.textContent;
		return {Text: text.replace(/\s+/g, ' ').trim().slice(0, 60), Color: getComputedStyle(e).color, Opacity: opacity,
			Background: control ? getComputedStyle(e).backgroundColor : ''};
	});
})()`

// unmarkText undoes markText.
const unmarkText = `(() => {
	for (const s of document.querySelectorAll('[data-a11y-wrap]')) s.replaceWith(...s.childNodes);
	for (const e of document.querySelectorAll('[data-a11y-text]')) e.removeAttribute('data-a11y-text');
	return true;
})()`

// a11yContrast checks colour contrast in the colour scheme the page is in:
// the text colour (with its opacity) against every background colour
// Chromium finds behind the text.
func a11yContrast(t *testing.T, ctx context.Context) []a11yViolation {
	t.Helper()
	texts, err := chromedp.Run(ctx, chromedp.Evaluate[[]textElement](markText))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](unmarkText)); err != nil {
			t.Fatal(err)
		}
	}()
	bgs, err := chromedp.Run(ctx, chromedp.Action[[]css.GetBackgroundColorsResult](
		func(ctx context.Context, tg *chromedp.Target) ([]css.GetBackgroundColorsResult, error) {
			if _, err := cdp.Call(ctx, tg, dom.Enable, dom.EnableParams{}); err != nil {
				return nil, err
			}
			if _, err := cdp.Call(ctx, tg, css.Enable, cdp.Empty{}); err != nil {
				return nil, err
			}
			depth := int64(0)
			doc, err := cdp.Call(ctx, tg, dom.GetDocument, dom.GetDocumentParams{Depth: &depth})
			if err != nil {
				return nil, err
			}
			ids, err := cdp.Call(ctx, tg, dom.QuerySelectorAll, dom.QuerySelectorAllParams{NodeID: doc.Root.NodeID, Selector: "[data-a11y-text]"})
			if err != nil {
				return nil, err
			}
			out := make([]css.GetBackgroundColorsResult, len(ids.NodeIDs))
			for i, id := range ids.NodeIDs {
				if out[i], err = cdp.Call(ctx, tg, css.GetBackgroundColors, css.GetBackgroundColorsParams{NodeID: id}); err != nil {
					return nil, err
				}
			}
			return out, nil
		}))
	if err != nil {
		t.Fatalf("background colours: %v", err)
	}
	if len(bgs) != len(texts) {
		t.Fatalf("%d text elements but %d background answers", len(texts), len(bgs))
	}
	var vs []a11yViolation
	for i, te := range texts {
		fg, err := parseColor(te.Color)
		if err != nil {
			t.Fatalf("text %q: %v", te.Text, err)
		}
		fg.a *= te.Opacity
		b := bgs[i]
		if len(b.BackgroundColors) == 0 && te.Background != "" {
			if c, err := parseColor(te.Background); err == nil && c.a == 1 {
				b.BackgroundColors = []string{te.Background}
			}
		}
		if len(b.BackgroundColors) == 0 {
			vs = append(vs, a11yViolation{ruleColorContrast, fmt.Sprintf("%q: Chromium cannot tell the background behind it", te.Text)})
			continue
		}
		need := contrastNormal
		if largeText(b.ComputedFontSize, b.ComputedFontWeight) {
			need = contrastLarge
		}
		for _, s := range b.BackgroundColors {
			bg, err := parseColor(s)
			if err != nil {
				t.Fatalf("background of %q: %v", te.Text, err)
			}
			if r := contrastRatio(fg, bg); r < need {
				vs = append(vs, a11yViolation{ruleColorContrast, fmt.Sprintf("%q: %s on %s is %.2f:1, want %.1f:1", te.Text, te.Color, s, r, need)})
				break
			}
		}
	}
	return vs
}

// largeText is WCAG's large text: 18pt (24px), or 14pt (18.66px) and bold.
func largeText(size, weight string) bool {
	px, err := strconv.ParseFloat(strings.TrimSuffix(size, "px"), 64)
	if err != nil {
		return false
	}
	w, err := strconv.Atoi(weight)
	if err != nil {
		w = map[string]int{"bold": 700, "bolder": 700}[weight]
	}
	return px >= 24 || px >= 18.66 && w >= 700
}

type rgbaColor struct{ r, g, b, a float64 }

var colorRE = regexp.MustCompile(`^rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:\s*[,/]\s*([\d.]+%?))?\s*\)$`)

// parseColor reads a CSS rgb() or rgba() colour as Chromium serialises it.
func parseColor(s string) (rgbaColor, error) {
	m := colorRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return rgbaColor{}, fmt.Errorf("colour %q is not rgb() or rgba()", s)
	}
	f := func(x string) float64 { v, _ := strconv.ParseFloat(x, 64); return v }
	c := rgbaColor{f(m[1]), f(m[2]), f(m[3]), 1}
	if a := m[4]; a != "" {
		if p, ok := strings.CutSuffix(a, "%"); ok {
			c.a = f(p) / 100
		} else {
			c.a = f(a)
		}
	}
	return c, nil
}

// contrastRatio is WCAG's contrast ratio of fg (blended over bg by its alpha)
// against bg (taken as opaque: Chromium has blended the layers behind).
func contrastRatio(fg, bg rgbaColor) float64 {
	blend := func(f, b float64) float64 { return f*fg.a + b*(1-fg.a) }
	l1 := luminance(blend(fg.r, bg.r), blend(fg.g, bg.g), blend(fg.b, bg.b))
	l2 := luminance(bg.r, bg.g, bg.b)
	return (math.Max(l1, l2) + 0.05) / (math.Min(l1, l2) + 0.05)
}

func luminance(r, g, b float64) float64 {
	lin := func(c float64) float64 {
		c /= 255
		if c <= 0.04045 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}
