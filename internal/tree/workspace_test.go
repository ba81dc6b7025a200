package tree_test

import (
	"testing"

	"github.com/upcheck/upcheck/internal/tree"
)

// A workspace's devDependencies are development's too: a package that only
// they bring in is DevOnly though the site reaches the workspace itself
// as a dependency; one the workspace also needs otherwise is not.
func TestAWorkspacesDevDependenciesAreDevOnly(t *testing.T) {
	t.Parallel()
	tr := &tree.Tree{
		Packages: []tree.Package{
			{ID: "packages/ws", Name: "ws", Source: tree.SourceLink},
			{ID: "node_modules/lint", Name: "lint", Version: "1.0.0", Source: tree.SourceRegistry},
			{ID: "node_modules/lib", Name: "lib", Version: "1.0.0", Source: tree.SourceRegistry},
		},
		Edges: []tree.Edge{
			{From: tree.Root, Name: "ws", Range: "file:packages/ws", Kind: tree.KindProd, To: "packages/ws"},
			{From: "packages/ws", Name: "lint", Range: "^1", Kind: tree.KindDev, To: "node_modules/lint"},
			{From: "packages/ws", Name: "lib", Range: "^1", Kind: tree.KindProd, To: "node_modules/lib"},
			{From: "node_modules/lint", Name: "lib", Range: "^1", Kind: tree.KindProd, To: "node_modules/lib"},
		},
	}
	tr.Sort()
	reach := tr.Reach()
	for id, dev := range map[string]bool{"packages/ws": false, "node_modules/lint": true, "node_modules/lib": false} {
		if r := reach[id]; r == nil || r.DevOnly != dev {
			t.Errorf("%s: %+v, want DevOnly %v", id, r, dev)
		}
	}
}
