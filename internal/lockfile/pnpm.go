package lockfile

import (
	"fmt"
	"path"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/tree"
)

// pnpmImporterDep is one dependency an importer declares.
type pnpmImporterDep struct {
	importer string // "." or a workspace's directory
	kind     tree.Kind
	name     string
	spec     string // the specifier: "^1.0.0", "npm:real@^1"
	version  string // "1.0.0(react@19.0.0)", "real@1.0.0", "link:../x"
	line     int
	field    string
}

// parsePnpm reads pnpm-lock.yaml of lockfileVersion 9: its importers, of
// which the root's (".") packages are those installed at the top level
// (pnpm installs only those there), each at its locked version, without
// the peer suffix pnpm appends ("2.1.0(react@19.0.0)" is 2.1.0), of which
// Options choose the components; linked and file versions ("link:",
// "file:") come from no registry and are no components. Its packages and
// snapshots, with the importers, are the tree (pnpmTree).
//
// Only the top-level entries read are tokenized and parsed by the YAML
// library: lockfileVersion and importers (manifest.MaxYAMLTokens bounds
// them). packages and snapshots, most of a large lockfile, are read line
// by line in the form pnpm writes them (pnpmScan), which allocates what it
// keeps and no more; the nesting of the whole file is checked first.
func parsePnpm(body []byte) (read, error) {
	tokens, err := manifest.TokenizeYAMLKeys(body, func(key string) bool { return key == "lockfileVersion" || key == "importers" })
	if err != nil {
		return read{}, fmt.Errorf(" %v", err) // "line N: …"
	}
	// pnpm writes no anchor, alias or tag; an alias expanded would
	// multiply what is read (an alias bomb): refused unparsed.
	for i, tk := range tokens {
		if tk.Type == token.AnchorType || tk.Type == token.AliasType || tk.Type == token.TagType {
			what := tk.Value
			if tk.Type != token.TagType && i+1 < len(tokens) {
				what += tokens[i+1].Value // the anchor's or the alias's name
			}
			return read{}, fmt.Errorf(" line %d: a YAML anchor, alias or tag (%s), which pnpm never writes: refused before it is parsed", tk.Position.Line, what)
		}
	}
	f, err := parser.Parse(tokens, 0)
	if err != nil {
		return read{}, fmt.Errorf(": not YAML: %v", err)
	}
	if len(f.Docs) != 1 || f.Docs[0].Body == nil {
		return read{}, fmt.Errorf(" line 1: not a pnpm-lock.yaml (no YAML mapping)")
	}
	top := entries(f.Docs[0].Body)
	if top == nil {
		return read{}, fmt.Errorf(" line 1: not a pnpm-lock.yaml (no YAML mapping)")
	}
	version := lookup(top, "lockfileVersion")
	switch {
	case version == nil:
		return read{}, fmt.Errorf(" line 1: no lockfileVersion: not a pnpm-lock.yaml")
	case !strings.HasPrefix(text(version.Value), "9."):
		return read{}, fmt.Errorf(" line %d: lockfileVersion %s is not read (version 9 is: pnpm 9 and later write it)", line(version), text(version.Value))
	}
	importers := lookup(top, "importers")
	if importers == nil {
		return read{}, fmt.Errorf(" line 1: no importers: not a pnpm-lock.yaml of version 9")
	}
	root := lookup(entries(importers.Value), ".")
	if root == nil {
		return read{}, fmt.Errorf(" line %d: importers has no \".\" (the site's own package)", line(importers))
	}
	dirs, deps, err := pnpmImporters(importers)
	if err != nil {
		return read{}, err
	}
	var pkgs []locked
	for _, d := range deps {
		if d.importer != "." || strings.HasPrefix(d.version, "link:") || strings.HasPrefix(d.version, "file:") {
			continue
		}
		ver, _, _ := strings.Cut(d.version, "(")
		pkgs = append(pkgs, locked{name: d.name, version: ver, direct: d.kind != tree.KindDev, line: d.line, field: d.field})
	}
	scan, err := pnpmScan(body)
	if err != nil {
		return read{}, err
	}
	t, dangling, err := pnpmTree(dirs, deps, scan)
	if err != nil {
		return read{}, err
	}
	return read{top: pkgs, tree: t, dangling: dangling}, nil
}

// pnpmImporters is the workspaces' importers (the site's own, ".", aside)
// and every dependency an importer declares, with its line and field.
func pnpmImporters(importers *ast.MappingValueNode) ([]pnpmImporter, []pnpmImporterDep, error) {
	var deps []pnpmImporterDep
	var dirs []pnpmImporter
	for _, imp := range entries(importers.Value) {
		dir := text(imp.Key)
		if dir != "." {
			dirs = append(dirs, pnpmImporter{dir: dir, line: line(imp)})
		}
		for _, kind := range []string{"dependencies", "optionalDependencies", "devDependencies"} {
			section := lookup(entries(imp.Value), kind)
			if section == nil {
				continue
			}
			for _, dep := range entries(section.Value) {
				name := text(dep.Key)
				field := fmt.Sprintf("importers[%q].%s[%q].version", dir, kind, name)
				v := lookup(entries(dep.Value), "version")
				if v == nil {
					return nil, nil, fmt.Errorf(" line %d: %s is missing", line(dep), field)
				}
				spec := ""
				if s := lookup(entries(dep.Value), "specifier"); s != nil {
					spec = text(s.Value)
				}
				deps = append(deps, pnpmImporterDep{importer: dir, kind: pnpmKinds[kind], name: name, spec: spec, version: text(v.Value), line: line(v), field: field})
			}
		}
	}
	return dirs, deps, nil
}

// pnpmImporter is a workspace's importer.
type pnpmImporter struct {
	dir  string
	line int
}

var pnpmKinds = map[string]tree.Kind{"dependencies": tree.KindProd, "optionalDependencies": tree.KindOptional, "devDependencies": tree.KindDev}

// pnpmRef is the snapshot key a dependency's version names (pnpm's
// refToRelative): "1.0.0(react@19.0.0)" of name is "name@1.0.0(react@19.0.0)",
// an alias's "real@1.0.0" is itself, a URL or a "file:" path is
// "name@URL"; "" for a "link:" (a directory, pnpmLink).
func pnpmRef(name, ref string) string {
	if strings.HasPrefix(ref, "link:") {
		return ""
	}
	if strings.HasPrefix(ref, "@") {
		return ref
	}
	at := strings.IndexByte(ref, '@')
	if at < 0 {
		return name + "@" + ref
	}
	colon, paren := strings.IndexByte(ref, ':'), strings.IndexByte(ref, '(')
	if (colon < 0 || at < colon) && (paren < 0 || at < paren) {
		return ref
	}
	return name + "@" + ref
}

// pnpmLink is the directory a "link:" version names, relative to the
// lockfile's folder: an importer's links are relative to its directory.
func pnpmLink(importer, ref string) string {
	return path.Clean(path.Join(importer, strings.TrimPrefix(ref, "link:")))
}

// splitKey is a packages or snapshots key's name and the rest:
// "@s/a@1.0.0(b@2.0.0)" is "@s/a" and "1.0.0(b@2.0.0)".
func splitKey(key string) (name, ref string, ok bool) {
	if len(key) < 2 {
		return "", "", false
	}
	i := strings.IndexByte(key[1:], '@')
	if i < 0 {
		return "", "", false
	}
	return key[:i+1], key[i+2:], i+2 < len(key)
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
