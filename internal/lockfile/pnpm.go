package lockfile

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/upcheck/upcheck/internal/manifest"
)

// parsePnpm reads pnpm-lock.yaml of lockfileVersion 9: the packages of the
// root importer (".") — pnpm installs only those at the top level — each
// at its locked version, without the peer suffix pnpm appends
// ("2.1.0(react@19.0.0)" is 2.1.0). Linked and file versions ("link:",
// "file:") come from no registry and are passed over. The other top-level
// entries are checked only for their nesting.
func parsePnpm(body []byte) ([]locked, error) {
	// Only the entries read are tokenized and parsed: packages and
	// snapshots, most of a large lockfile, are scanned for their nesting
	// and passed over (manifest.MaxYAMLTokens bounds the rest).
	tokens, err := manifest.TokenizeYAMLKeys(body, func(key string) bool { return key == "lockfileVersion" || key == "importers" })
	if err != nil {
		return nil, fmt.Errorf(" %v", err) // "line N: …"
	}
	f, err := parser.Parse(tokens, 0)
	if err != nil {
		return nil, fmt.Errorf(": not YAML: %v", err)
	}
	if len(f.Docs) != 1 || f.Docs[0].Body == nil {
		return nil, fmt.Errorf(" line 1: not a pnpm-lock.yaml (no YAML mapping)")
	}
	top := entries(f.Docs[0].Body)
	if top == nil {
		return nil, fmt.Errorf(" line 1: not a pnpm-lock.yaml (no YAML mapping)")
	}
	version := lookup(top, "lockfileVersion")
	switch {
	case version == nil:
		return nil, fmt.Errorf(" line 1: no lockfileVersion: not a pnpm-lock.yaml")
	case !strings.HasPrefix(text(version.Value), "9."):
		return nil, fmt.Errorf(" line %d: lockfileVersion %s is not read (version 9 is: pnpm 9 and later write it)", line(version), text(version.Value))
	}
	importers := lookup(top, "importers")
	if importers == nil {
		return nil, fmt.Errorf(" line 1: no importers: not a pnpm-lock.yaml of version 9")
	}
	root := lookup(entries(importers.Value), ".")
	if root == nil {
		return nil, fmt.Errorf(" line %d: importers has no \".\" (the site's own package)", line(importers))
	}
	var pkgs []locked
	for _, kind := range []string{"dependencies", "optionalDependencies", "devDependencies"} {
		deps := lookup(entries(root.Value), kind)
		if deps == nil {
			continue
		}
		for _, dep := range entries(deps.Value) {
			name := text(dep.Key)
			field := fmt.Sprintf("importers[\".\"].%s[%q].version", kind, name)
			v := lookup(entries(dep.Value), "version")
			if v == nil {
				return nil, fmt.Errorf(" line %d: %s is missing", line(dep), field)
			}
			ver := text(v.Value)
			if strings.HasPrefix(ver, "link:") || strings.HasPrefix(ver, "file:") {
				continue
			}
			ver, _, _ = strings.Cut(ver, "(")
			pkgs = append(pkgs, locked{name: name, version: ver, direct: kind != "devDependencies", line: line(v), field: field})
		}
	}
	return pkgs, nil
}

// entries is a mapping's entries, or nil when n is not a mapping.
func entries(n ast.Node) []*ast.MappingValueNode {
	switch m := n.(type) {
	case *ast.MappingNode:
		return m.Values
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}
	}
	return nil
}

func lookup(es []*ast.MappingValueNode, key string) *ast.MappingValueNode {
	for _, e := range es {
		if text(e.Key) == key {
			return e
		}
	}
	return nil
}

// text is a scalar's text, quotes removed.
func text(n ast.Node) string {
	if n == nil || n.GetToken() == nil {
		return ""
	}
	return n.GetToken().Value
}

func line(e *ast.MappingValueNode) int { return e.Key.GetToken().Position.Line }
