package tree_test

import (
	"reflect"
	"testing"

	"github.com/upcheck/upcheck/internal/tree"
)

// site: express → send → debug@2 (nested), express → debug@4 (hoisted),
// mocha (dev) → debug@4, a ⇄ b (a cycle), and an optional dependency
// that was not installed.
func site() *tree.Tree {
	pkg := func(id, name, version string) tree.Package {
		return tree.Package{ID: id, Name: name, Version: version, Source: tree.SourceRegistry}
	}
	t := &tree.Tree{
		Packages: []tree.Package{
			pkg("node_modules/express", "express", "4.17.1"),
			pkg("node_modules/send", "send", "0.17.1"),
			pkg("node_modules/send/node_modules/debug", "debug", "2.6.9"),
			pkg("node_modules/debug", "debug", "4.3.4"),
			pkg("node_modules/mocha", "mocha", "10.0.0"),
			pkg("node_modules/a", "a", "1.0.0"),
			pkg("node_modules/b", "b", "1.0.0"),
			pkg("node_modules/orphan", "orphan", "1.0.0"),
		},
		Edges: []tree.Edge{
			{From: tree.Root, Name: "express", Range: "^4.17.0", Kind: tree.KindProd, To: "node_modules/express"},
			{From: tree.Root, Name: "mocha", Range: "^10", Kind: tree.KindDev, To: "node_modules/mocha"},
			{From: tree.Root, Name: "a", Range: "1", Kind: tree.KindProd, To: "node_modules/a"},
			{From: "node_modules/express", Name: "send", Range: "0.17.1", Kind: tree.KindProd, To: "node_modules/send"},
			{From: "node_modules/express", Name: "debug", Range: "^4", Kind: tree.KindProd, To: "node_modules/debug"},
			{From: "node_modules/express", Name: "fsevents", Range: "^2", Kind: tree.KindOptional},
			{From: "node_modules/send", Name: "debug", Range: "2.6.9", Kind: tree.KindProd, To: "node_modules/send/node_modules/debug"},
			{From: "node_modules/mocha", Name: "debug", Range: "^4", Kind: tree.KindProd, To: "node_modules/debug"},
			{From: "node_modules/mocha", Name: "chai", Range: "^4", Kind: tree.KindProd, To: "node_modules/mocha/node_modules/chai"}, // dangling: no such entry
			{From: "node_modules/a", Name: "b", Range: "1", Kind: tree.KindProd, To: "node_modules/b"},
			{From: "node_modules/b", Name: "a", Range: "1", Kind: tree.KindProd, To: "node_modules/a"},
		},
	}
	t.Sort()
	return t
}

func TestReachGivesOneShortestPathPerDirectDependency(t *testing.T) {
	got := site().Reach()
	want := map[string]*tree.Reach{
		"node_modules/express":                 {Via: []tree.Via{{Head: "express", Path: []string{"express"}}}},
		"node_modules/send":                    {Via: []tree.Via{{Head: "express", Path: []string{"express", "send"}}}},
		"node_modules/send/node_modules/debug": {Via: []tree.Via{{Head: "express", Path: []string{"express", "send", "debug"}}}},
		"node_modules/debug": {Via: []tree.Via{
			{Head: "express", Path: []string{"express", "debug"}},
			{Head: "mocha", Path: []string{"mocha", "debug"}},
		}},
		"node_modules/mocha": {Via: []tree.Via{{Head: "mocha", Path: []string{"mocha"}}}, DevOnly: true},
		"node_modules/a":     {Via: []tree.Via{{Head: "a", Path: []string{"a"}}}},
		"node_modules/b":     {Via: []tree.Via{{Head: "a", Path: []string{"a", "b"}}}},
	}
	if !reflect.DeepEqual(got, want) {
		for id, r := range got {
			t.Logf("%s: %+v", id, *r)
		}
		t.Fatalf("Reach differs from %v", want)
	}
}

func TestHashFollowsContentNotOrder(t *testing.T) {
	a, b := site(), site()
	b.Packages[0], b.Packages[1] = b.Packages[1], b.Packages[0]
	b.Sort()
	if a.Hash() != b.Hash() {
		t.Fatal("one tree in two orders hashes twice")
	}
	b.Packages[2].Integrity = "sha512-other"
	if a.Hash() == b.Hash() {
		t.Fatal("a changed integrity leaves the hash as it was")
	}
	c := site()
	c.Edges[0].Range = "^4.18.0"
	if a.Hash() == c.Hash() {
		t.Fatal("a changed range leaves the hash as it was")
	}
}
