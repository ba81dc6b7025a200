package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// wordRules are the spellings of a quantity's words that belong to
// internal/readmodel/words.go alone, each with the function to read
// instead: a time layout, the unit pairs of a length, the short form of a
// wait.
var wordRules = map[string]string{
	`"2006-01-02 15:04`:   "readmodel.TimeText or TimeRangeText",
	`15:04:05 UTC"`:       "readmodel.TimeText",
	`"2 Jan 2006"`:        "readmodel.DateText",
	`"second", "seconds"`: "readmodel.DurationText, SpanText or SpokenSecondsText",
	`"minute", "minutes"`: "readmodel.DurationText or SpanText",
	`"hour", "hours"`:     "readmodel.DurationText or SpanText",
	`"day", "days"`:       "readmodel.DurationText or SpanText",
	`min %d s`:            "readmodel.SecondsText",
	`" min "`:             "readmodel.SecondsText",
}

// Words once: a quantity (a length, a moment, a day) and a check status
// are worded by internal/readmodel alone, and the pages (views, with the
// templates' generated code), the CLI, emails and chat read its words. A
// second spelling of a time layout or of a length's units, or a check
// status's label as a string of its own, anywhere else in the product's
// Go code fails this test.
func TestWordsOnce(t *testing.T) {
	labels := map[string]bool{}
	for _, s := range readmodel.WordedCheckStatuses() {
		if l := readmodel.CheckStatusText(s).Label; strings.Contains(l, " ") || l == "Interrupted" || l == "Abandoned" || l == "Cooldown" {
			labels[l] = true
		}
	}
	if len(labels) < 4 {
		t.Fatalf("only %d status labels to look for: %v", len(labels), labels)
	}
	skip := func(rel string) bool {
		return rel == "internal/readmodel" || rel == "internal/db" || rel == "internal/testing" || rel == "tools" ||
			rel == "internal/dev" || rel == "cmd/upcheck-bench"
	}
	walkGoFiles(t, productFiles, 50, skip, func(rel, path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for spelling, instead := range wordRules {
			if strings.Contains(string(b), spelling) {
				t.Errorf("%s spells %s: read %s", rel, spelling, instead)
			}
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, b, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if v, err := strconv.Unquote(lit.Value); err == nil && labels[v] {
				t.Errorf("%s:%d words the check status %q: read readmodel.CheckStatusText", rel, fset.Position(lit.Pos()).Line, v)
			}
			return true
		})
	})
}
