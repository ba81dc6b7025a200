package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// root is the repository root, seen from this package's directory.
const root = "../../.."

// The code generators and the linter live in tools/go.mod, a module of their
// own: in the product's go.mod their dependencies (TiDB's parser, MySQL,
// SQLite, gRPC, wazero for sqlc alone) would be the product's. The templ
// generator must be the version of the templ runtime that the generated
// code imports.
func TestToolsLiveInTheirOwnModule(t *testing.T) {
	product := readFile(t, filepath.Join(root, "go.mod"))
	tools := readFile(t, filepath.Join(root, "tools", "go.mod"))
	if tool := regexp.MustCompile(`(?m)^tool\b.*$`).FindString(product); tool != "" {
		t.Errorf("go.mod has %q: tools go to tools/go.mod (go -C tools get -tool ...)", tool)
	}
	for _, gen := range []string{"github.com/sqlc-dev/sqlc", "honnef.co/go/tools"} {
		if requires(product, gen) != "" {
			t.Errorf("go.mod requires %s, a tool's module: it belongs in tools/go.mod", gen)
		}
	}
	for _, tool := range []string{"github.com/a-h/templ/cmd/templ", "github.com/sqlc-dev/sqlc/cmd/sqlc", "honnef.co/go/tools/cmd/staticcheck"} {
		if !regexp.MustCompile(`(?m)^\s*(tool\s+)?` + regexp.QuoteMeta(tool) + `\s*$`).MatchString(tools) {
			t.Errorf("tools/go.mod has no tool line for %s, which the Makefile runs", tool)
		}
	}
	runtime, generator := requires(product, "github.com/a-h/templ"), requires(tools, "github.com/a-h/templ")
	if runtime == "" || runtime != generator {
		t.Errorf("templ runtime in go.mod is %q, the generator in tools/go.mod is %q: they must be the same version", runtime, generator)
	}
}

// requires returns the version of module that the go.mod text requires, or "".
func requires(gomod, module string) string {
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + regexp.QuoteMeta(module) + `\s+(v\S+)`).FindStringSubmatch(gomod)
	if m == nil {
		return ""
	}
	return m[1]
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
