package npm

// NewPublisher reports whether version was published by an account new to
// pkg (docs/policy.md "Trust going down"): the account that published it
// (Version.Publisher) published none of the versions published strictly
// before it (the document's "time"), while at least one of those names
// its publisher. It makes no claim (isNew false) when the registry does
// not say who published version, when version has no publish time, or
// when no earlier version names its publisher: a registry that never
// says who publishes (Verdaccio does not) raises nothing.
func NewPublisher(pkg *Package, version string) (account string, isNew bool) {
	v, ok := pkg.Versions[version]
	at, timed := pkg.Published[version]
	if !ok || v.Publisher == "" || !timed {
		return "", false
	}
	known := false
	for other, ov := range pkg.Versions {
		t, ok := pkg.Published[other]
		if other == version || !ok || !t.Before(at) || ov.Publisher == "" {
			continue
		}
		if ov.Publisher == v.Publisher {
			return v.Publisher, false
		}
		known = true
	}
	return v.Publisher, known
}
