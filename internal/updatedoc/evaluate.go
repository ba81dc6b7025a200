package updatedoc

import "github.com/upcheck/upcheck/internal/release"

// Evaluate evaluates the component code, installed at version installed on
// a site whose core is at installedCore, against doc: release.Evaluate of
// what doc says of code (Document.Package). A nil document is an error
// wrapping [ErrInvalid]: there is nothing to evaluate against, which is not
// the same as a document that does not name the component (Missing).
func Evaluate(doc *Document, code, installed, installedCore string) (release.Evaluation, error) {
	if doc == nil {
		return release.Evaluation{}, invalidf(nil, "evaluate %q: no update document", code)
	}
	return release.Evaluate(doc.Package(code), code, installed, installedCore)
}
