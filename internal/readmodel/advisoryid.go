package readmodel

// MaxAdvisoryID is the most bytes an advisory id may have, wherever one
// comes from: an update document, an OSV record (its id, aliases and
// related ids), the manifest's dismissals. Operators dismiss an advisory
// by its id or an alias (a path segment of the AdminCP and the API), and
// the dismissal takes any id this limit lets through; a longer id is
// refused where it enters (the document, the record, the manifest), in
// words, so that nothing shown and counted can fail to be dismissed.
const MaxAdvisoryID = 200

// The most aliases and references one advisory may list, wherever it comes
// from: a publisher's document (updatedoc) and an OSV record a feed or
// osv2doc reads (osv) alike, so that what a feed holds a document can say.
// Generous, as real records need (GitHub's list every reference NVD
// gathered); a record's and a document's size are capped apart.
const (
	MaxAdvisoryAliases    = 1_000 // osv: related too
	MaxAdvisoryReferences = 10_000
)
