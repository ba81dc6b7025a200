package updatecheck

import (
	"encoding/json"

	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/npmver"
	"github.com/upcheck/upcheck/internal/store"
)

// An npm component's package document is read once a check, by its
// source's fetch; the fix step (tree_fix.go) decides "through a
// component" from what that fetch stored, not by fetching the document
// again. So the source's fetch keeps the dependencies of the releases at
// or above the lowest installed version of its components (the only
// releases a fix through the component can name), and says from which
// version it kept them (npm.Package.DependenciesFrom).

// componentsFloor is the lowest installed version of comps, "" when none
// is a version.
func componentsFloor(comps []store.Component) string {
	floor := ""
	for _, c := range comps {
		v := npmver.Clean(c.InstalledVersion)
		if _, err := npmver.Parse(v); err == nil && (floor == "" || npmver.Compare(v, floor) < 0) {
			floor = v
		}
	}
	return floor
}

// keepDependencies makes pr keep the dependencies of the releases at or
// above floor; none when floor is "".
func keepDependencies(pr *npm.PackageRequest, floor string) {
	if floor != "" {
		pr.Keep = keepFrom(floor)
	}
}

// keepsDependencies reports whether pkg kept the dependencies of the
// releases at or above floor (floor "": none are needed); a nil pkg
// keeps nothing.
func keepsDependencies(pkg *npm.Package, floor string) bool {
	if floor == "" {
		return true
	}
	return pkg != nil && pkg.DependenciesFrom != "" && covers(pkg.DependenciesFrom, floor)
}

// storedKeepsDependencies is keepsDependencies of a stored document,
// read for its DependenciesFrom alone (nothing else of it is decoded or
// held); a document that does not decode keeps nothing.
func storedKeepsDependencies(doc []byte, floor string) bool {
	if floor == "" {
		return true
	}
	var head struct{ DependenciesFrom string }
	if json.Unmarshal(doc, &head) != nil {
		return false
	}
	return head.DependenciesFrom != "" && covers(head.DependenciesFrom, floor)
}
