package notify

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// hostileTexts are publisher or feed texts that, as they are, would ping
// in Mattermost (or Slack), link somewhere, show an image or format a
// chat post.
var hostileTexts = []string{
	"@channel", "@here now", "see @all", "ask @mallory", "@acme/blog",
	"[Install the fix](https://evil.example/fix)", "![pixel](https://evil.example/p.png)",
	"[fix][1]", "https://evil.example/fix", "www.evil.example", "go to evil.example now",
	"*urgent*", "**urgent**", "_urgent_", "~fixed~", "~~fixed~~", "`x` y `z", "```block```",
	"<!channel>", "<@U123>", "<https://evil.example|the fix>", ":rotating_light: now", "#security",
	"$x$", `\*x\*`, "a | b", "1 > 0 & 2 < 3",
}

// markup is what a chat must not carry outside a code span: mention,
// link, image, emphasis, strike-through, code, hashtag, escape, HTML.
const markup = "@[]!*_~`#$\\|<>/"

// outsideCode is s without its code spans; ok is false when a span is
// left open.
func outsideCode(s string) (string, bool) {
	parts := strings.Split(s, "`")
	var out strings.Builder
	for i, p := range parts {
		if i%2 == 0 {
			out.WriteString(p)
		} else if strings.ContainsAny(p, "<>\n") {
			return "", false // unescaped inside a span: Slack would read it
		}
	}
	return out.String(), len(parts)%2 == 1
}

// chatPayloads are an event of every kind a chat words, each text of the
// publisher's, the feed's or the manifest's set to text.
func chatPayloads(t *testing.T, text string) map[string][]byte {
	t.Helper()
	component := map[string]string{"code": "blog", "name": text, "installed": "2.3.0"}
	advisory := map[string]any{"id": text, "aliases": []string{text}, "severity": text, "summary": text}
	out := map[string][]byte{}
	for typ, p := range map[string]map[string]any{
		string(readmodel.EventSecurityUpdate): {"component": component, "version": text, "severity": text, "summary": text,
			"advisories": []map[string]any{{"id": text, "aliases": []string{text}}}},
		string(readmodel.EventAdvisoryUnfixed):                {"component": component, "advisory": advisory},
		string(readmodel.EventUpdateAvailable):                {"component": component, "version": text},
		string(readmodel.EventSourceFailing):                  {"source": text, "last_error_kind": "http_status", "last_error_args": map[string]any{"address": text, "problem": text}},
		string(readmodel.EventMalicious):                      {"component": component, "advisory": advisory},
		string(readmodel.EventKnownExploited):                 {"component": component, "advisory": advisory, "kev": map[string]any{"date_added": text, "due_date": text, "required_action": text}},
		string(readmodel.EventDeprecated):                     {"component": component, "package": text, "message": text},
		string(readmodel.EventTrustDowngrade) + "/provenance": {"component": component, "package": text, "version": text, "kind": string(readmodel.DowngradeProvenance)},
		string(readmodel.EventRegistryKeysChanged):            {"registry": text, "key_ids": []string{text}, "old_key_ids": []string{text}},
		string(readmodel.EventTrustDowngrade) + "/publisher":  {"component": component, "version": text, "kind": string(readmodel.DowngradePublisher), "account": text},
		string(readmodel.EventTrustDowngrade) + "/pin":        {"kind": string(readmodel.DowngradePin), "source": text, "reason": text, "components": []string{text}},
		string(readmodel.EventTest):                           {"message": text},
	} {
		if typ == string(readmodel.EventKnownExploited) {
			p["advisory"] = map[string]any{"id": text, "aliases": []string{text}, "severity": text, "summary": text,
				"kev": map[string]any{"date_added": text, "due_date": text, "required_action": text}}
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		out[typ] = b
	}
	return out
}

// No text of a publisher, a feed or the manifest reaches a Slack or
// Mattermost post as markup, for any event a chat words: what either
// format would read as a mention, a link, an image or formatting is an
// inline code span (which neither formats, links, or — Mattermost — pings
// for), escaped, never left open; our own AdminCP link is the post's only
// link. Plain words stay plain.
func TestChatTextNeitherPingsNorLinks(t *testing.T) {
	t.Parallel()
	for _, text := range hostileTexts {
		for typ, payload := range chatPayloads(t, text) {
			typ, _, _ = strings.Cut(typ, "/")
			post := slackText(store.Delivery{Type: typ, Payload: payload}, "https://upcheck.test/admin/plugins/blog")
			post, ok := strings.CutSuffix(post, " https://upcheck.test/admin/plugins/blog")
			if !ok {
				t.Fatalf("%s with %q: the AdminCP link is not at the end: %q", typ, text, post)
			}
			rest, closed := outsideCode(post)
			if !closed {
				t.Errorf("%s with %q: a code span is open or holds < or >: %q", typ, text, post)
				continue
			}
			if i := strings.IndexAny(rest, markup); i >= 0 || strings.Contains(rest, "evil.example") {
				t.Errorf("%s with %q: markup outside code: %q", typ, text, post)
			}
		}
	}
	for text, want := range map[string]string{
		"Blog":                         "Blog",
		"2.4.0-beta.1":                 "2.4.0-beta.1",
		"CVE-2026-0001":                "CVE-2026-0001",
		"XSS in the comment form (v2)": "XSS in the comment form (v2)",
		"Note: fixed in 2.4.0.":        "Note: fixed in 2.4.0.",
		"lodash_merge":                 "lodash_merge",
		"1 > 0 & 2 < 3":                "1 &gt; 0 &amp; 2 &lt; 3",
		"Ünïcödé → ok…":                "Ünïcödé → ok…",
		"@acme/blog":                   "`@acme/blog`",
		"see https://evil.example":     "`see https://evil.example`",
		"evil.example":                 "`evil.example`",
		"*x* `y`":                      "`*x* 'y'`",
	} {
		if got := chat(text, 300); got != want {
			t.Errorf("chat(%q) = %q, want %q", text, got, want)
		}
	}
}

// A post cut to its cap never leaves a code span open: the text after an
// opening backtick would be markup again.
func TestACappedChatPostLeavesNoCodeSpanOpen(t *testing.T) {
	t.Parallel()
	for n := 20; n < 60; n++ {
		hostile := "@channel " + strings.Repeat("w ", n)
		var advisories []map[string]any
		for range 10 {
			advisories = append(advisories, map[string]any{"id": hostile, "aliases": []string{hostile, hostile, hostile}})
		}
		p, _ := json.Marshal(map[string]any{"component": map[string]string{"name": "Blog", "installed": "1.0.0"},
			"version": "2.0.0", "advisories": advisories})
		post := slackText(store.Delivery{Type: string(readmodel.EventSecurityUpdate), Payload: p}, "")
		if rest, closed := outsideCode(post); !closed || strings.Contains(rest, "@") {
			t.Fatalf("a capped post (%d runes) leaves markup: %q", len([]rune(post)), post)
		}
		if !strings.HasSuffix(post, "…") {
			t.Fatalf("the post (%d runes) was not capped", len([]rune(post)))
		}
	}
}
