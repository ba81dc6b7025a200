package views

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// prettyHTML is a render as the golden files hold it: tokenised as
// written, then written back one tag or text per line, indented two spaces
// a level, so that a change to a page shows as a readable diff.
//
// Only spellings of the same token are written the same: attribute
// quotes, "/>" on a void element, entity spellings, upper-case names, a
// lower-case doctype. Every tag, attribute (in its order) and text is kept,
// whitespace included. The indentation is the formatter's own; the page's
// whitespace is spelled out as character references where it could be
// mistaken for it: a text's leading and trailing spaces are &#32;, and
// newlines and tabs in text or attribute values are &#10; and &#9;. So a
// space that templ puts between two links, or drops, changes the golden
// file, and any other change to text, attributes or structure does too.
// The tokens are not parsed into a tree: markup that a browser would
// repair shows as written.
//
// An element whose only content is one text, or nothing, stays on one
// line: <h1>Dashboard</h1>.
func prettyHTML(src string) (string, error) {
	var toks []html.Token
	z := html.NewTokenizer(strings.NewReader(src))
	for {
		if z.Next() == html.ErrorToken {
			if err := z.Err(); err != io.EOF {
				return "", fmt.Errorf("tokenise: %w", err)
			}
			break
		}
		tok := z.Token()
		if n := len(toks); tok.Type == html.TextToken && n > 0 && toks[n-1].Type == html.TextToken {
			toks[n-1].Data += tok.Data
			continue
		}
		toks = append(toks, tok)
	}
	var b strings.Builder
	depth := 0
	rawText := false // inside <script> or <style>: text is written as it is
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		indent := strings.Repeat("  ", depth)
		switch tok.Type {
		case html.DoctypeToken:
			b.WriteString(indent + "<!DOCTYPE " + tok.Data + ">\n")
		case html.CommentToken:
			b.WriteString(indent + "<!--" + tok.Data + "-->\n")
		case html.TextToken:
			b.WriteString(indent + prettyText(tok.Data, rawText) + "\n")
		case html.SelfClosingTagToken:
			if voidElements[tok.Data] {
				b.WriteString(indent + startTag(tok) + "\n")
			} else {
				b.WriteString(indent + strings.TrimSuffix(startTag(tok), ">") + "/>\n")
			}
		case html.StartTagToken:
			b.WriteString(indent + startTag(tok))
			raw := rawTextElements[tok.Data]
			switch {
			case voidElements[tok.Data]:
				b.WriteString("\n")
			case i+1 < len(toks) && isEnd(toks[i+1], tok.Data):
				b.WriteString("</" + tok.Data + ">\n")
				i++
			case i+2 < len(toks) && toks[i+1].Type == html.TextToken && isEnd(toks[i+2], tok.Data):
				b.WriteString(prettyText(toks[i+1].Data, raw) + "</" + tok.Data + ">\n")
				i += 2
			default:
				b.WriteString("\n")
				depth++
				rawText = raw
			}
		case html.EndTagToken:
			depth = max(depth-1, 0)
			rawText = false
			b.WriteString(strings.Repeat("  ", depth) + "</" + tok.Data + ">\n")
		}
	}
	return b.String(), nil
}

func isEnd(tok html.Token, name string) bool {
	return tok.Type == html.EndTagToken && tok.Data == name
}

// voidElements have no end tag and never any content.
var voidElements = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true,
	"input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true,
}

// rawTextElements hold text without character references, written as it
// is.
var rawTextElements = map[string]bool{"script": true, "style": true}

// startTag writes a start tag with its attributes in their order. A value
// holding a double quote and no single quote is single-quoted, which keeps
// JSON in data attributes readable.
func startTag(tok html.Token) string {
	var b strings.Builder
	b.WriteString("<" + tok.Data)
	for _, a := range tok.Attr {
		b.WriteString(" ")
		if a.Namespace != "" {
			b.WriteString(a.Namespace + ":")
		}
		b.WriteString(a.Key)
		if a.Val == "" {
			continue
		}
		v := strings.NewReplacer("&", "&amp;", "\u00a0", "&nbsp;", "\n", "&#10;", "\r", "&#13;", "\t", "&#9;").Replace(a.Val)
		if strings.Contains(v, `"`) && !strings.Contains(v, "'") {
			b.WriteString("='" + v + "'")
		} else {
			b.WriteString(`="` + strings.ReplaceAll(v, `"`, "&#34;") + `"`)
		}
	}
	b.WriteString(">")
	return b.String()
}

// prettyText escapes a text for one line, spelling out the whitespace the
// indentation could hide.
func prettyText(text string, raw bool) string {
	if raw {
		return text
	}
	s := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\u00a0", "&nbsp;",
		"\n", "&#10;", "\r", "&#13;", "\t", "&#9;", "\f", "&#12;").Replace(text)
	body := strings.Trim(s, " ")
	if body == "" {
		return strings.Repeat("&#32;", len(s))
	}
	lead := len(s) - len(strings.TrimLeft(s, " "))
	trail := len(s) - len(strings.TrimRight(s, " "))
	return strings.Repeat("&#32;", lead) + body + strings.Repeat("&#32;", trail)
}

// TestPrettyHTMLKeepsEveryToken: two renders that differ in a tag, an
// attribute or a text never give the same golden file; two spellings of
// the same tokens do.
func TestPrettyHTMLKeepsEveryToken(t *testing.T) {
	t.Parallel()
	pretty := func(src string) string {
		t.Helper()
		out, err := prettyHTML(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		return out
	}
	for _, tc := range [][2]string{
		{`<p><a>x</a> <a>y</a></p>`, `<p><a>x</a><a>y</a></p>`},
		{`<p><a>x</a> <a>y</a></p>`, `<p><a>x</a>  <a>y</a></p>`},
		{`<p>Plugins <span>3</span></p>`, `<p>Plugins<span>3</span></p>`},
		{`<p>a b</p>`, `<p>a  b</p>`},
		{`<p>a b</p>`, "<p>a\nb</p>"},
		{`<p>a</p>`, `<p>a </p>`},
		{`<p>a</p>`, `<p> a</p>`},
		{`<p>a</p>`, `<p>b</p>`},
		{`<p>a</p>`, `<div>a</div>`},
		{`<p>&lt;b&gt;</p>`, `<p><b></b></p>`},
		{`<p>&amp;#32;</p>`, `<p> </p>`},
		{`<p>a&nbsp;b</p>`, `<p>a b</p>`},
		{`<p class="x">a</p>`, `<p class="y">a</p>`},
		{`<p class="x" id="y">a</p>`, `<p id="y" class="x">a</p>`},
		{`<p hidden>a</p>`, `<p>a</p>`},
		{`<p title='a"b'>a</p>`, `<p title="a'b">a</p>`},
		{`<p title="a&#10;b">a</p>`, `<p title="a b">a</p>`},
		{`<ul><li>a</li><li>b</li></ul>`, `<ul><li>a</li></ul><ul><li>b</li></ul>`},
		{`<ul><li>a</li><li>b</li></ul>`, `<ul><li>a<li>b</li></li></ul>`},
		{`<p><!-- a --></p>`, `<p></p>`},
		{`<div/>`, `<div></div>`},
	} {
		if a, b := pretty(tc[0]), pretty(tc[1]); a == b {
			t.Errorf("%q and %q both give\n%s", tc[0], tc[1], a)
		}
	}
	for _, tc := range [][2]string{
		{`<!doctype html><p class=x>a</p>`, `<!DOCTYPE html><P CLASS="x">a</P>`},
		{`<input hidden="">`, `<input hidden/>`},
		{`<p>&#39;</p>`, `<p>'</p>`},
	} {
		if a, b := pretty(tc[0]), pretty(tc[1]); a != b {
			t.Errorf("%q and %q differ:\n%s\n%s", tc[0], tc[1], a, b)
		}
	}
	want := `<!DOCTYPE html>
<p class="x" data-words='{"a":"b"}'>
  Plugins&#32;
  <span hidden>3</span>
  &#32;
  <a href="/?a=1&amp;b=2">x &lt; y</a>
  <br>
  <script src="/app.js"></script>
  <script>if (a < b) {}</script>
</p>
`
	src := `<!doctype html><p class="x" data-words="{&#34;a&#34;:&#34;b&#34;}">Plugins <span hidden="">3</span> ` +
		`<a href="/?a=1&b=2">x &lt; y</a><br/><script src="/app.js"></script><script>if (a < b) {}</script></p>`
	if got := pretty(src); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestPrettyHTMLRoundTrip: every page's golden text holds the render's
// tokens exactly, once the formatter's own line breaks and indentation are
// taken out again.
func TestPrettyHTMLRoundTrip(t *testing.T) {
	t.Parallel()
	for name, c := range pages() {
		src := render(t, c)
		out, err := prettyHTML(src)
		if err != nil {
			t.Fatal(err)
		}
		want, got := tokens(t, src, false), tokens(t, out, true)
		if !reflect.DeepEqual(got, want) {
			for i := range min(len(got), len(want)) {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("%s: token %d is %q in the golden text, %q in the render", name, i, got[i], want[i])
				}
			}
			t.Fatalf("%s: %d tokens in the golden text, %d in the render", name, len(got), len(want))
		}
	}
}

// tokens is what a template wrote, one spelling per token. From a golden
// text (pretty), the whitespace around each text is the formatter's and
// is dropped before the text's references are decoded.
func tokens(t *testing.T, src string, pretty bool) []html.Token {
	t.Helper()
	var out []html.Token
	z := html.NewTokenizer(strings.NewReader(src))
	for z.Next() != html.ErrorToken {
		raw := string(z.Raw())
		tok := z.Token()
		switch {
		case tok.Type == html.SelfClosingTagToken && voidElements[tok.Data]:
			tok.Type = html.StartTagToken
		case tok.Type == html.TextToken && pretty:
			if tok.Data = html.UnescapeString(strings.TrimSpace(raw)); tok.Data == "" {
				continue
			}
		}
		if n := len(out); tok.Type == html.TextToken && n > 0 && out[n-1].Type == html.TextToken {
			out[n-1].Data += tok.Data
			continue
		}
		out = append(out, tok)
	}
	if err := z.Err(); err != io.EOF {
		t.Fatalf("tokenise: %v", err)
	}
	return out
}

// lineDifference shows the first line where two golden texts part.
func lineDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			return fmt.Sprintf("line %d:\nwant: %s\ngot:  %s", i+1, wl, gl)
		}
	}
	return "no difference"
}
