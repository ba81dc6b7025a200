package views

import (
	"fmt"
	"net/url"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// PathSourceImport is the form that imports a document for one source
// (GET ?url=…, POST multipart).
const PathSourceImport = PathSources + "/import"

// SourceImportPath is the import form of the source at url.
func SourceImportPath(sourceURL string) string {
	return PathSourceImport + "?" + url.Values{"url": {sourceURL}}.Encode()
}

// SourceImportProps is the page that imports a document obtained
// elsewhere (a mirror, a USB stick) for one source.
type SourceImportProps struct {
	Layout LayoutProps
	Source readmodel.SourceRow
	// MaxBytes is the most a document may have: the fetcher's body cap.
	MaxBytes int64
	// Outcome is the import just made; nil before one.
	Outcome *ImportOutcome
}

// ImportOutcome is how an import ended (updatecheck.ImportResult).
type ImportOutcome struct {
	// Status is imported, unchanged, refused or busy.
	Status     string
	Sequence   int64
	Components int
	// Kind (a readmodel.ErrorKind), Args and Detail: why a refused import
	// was refused, worded as a fetch failure is.
	Kind, Detail string
	Args         readmodel.FailureArgs
}

// importOutcomeText words an import that was not refused (a refusal is
// worded by the problem component, as a fetch failure).
func importOutcomeText(o ImportOutcome) string {
	switch o.Status {
	case "imported":
		return fmt.Sprintf("Imported: sequence %d is the source’s document now, and %s evaluated from it.",
			o.Sequence, countNoun(o.Components, "component was", "components were"))
	case "unchanged":
		return fmt.Sprintf("This is the document already stored (sequence %d): it stays, and %s evaluated from it again.",
			o.Sequence, countNoun(o.Components, "component was", "components were"))
	case string(readmodel.CheckBusy):
		return "A check is running, so nothing was imported. Try again when it has finished."
	}
	return o.Status
}

// importNoticeClass is the class of an import's notice: ok when the
// document is the source's now, a warning otherwise.
func importNoticeClass(status string) string {
	if status == "imported" || status == "unchanged" {
		return "notice notice-ok"
	}
	return "notice notice-warn"
}

// importRunText is what an import in the history did with its document.
func importRunText(r readmodel.RunRow) string {
	switch {
	case r.Failed > 0:
		return "document refused; the stored one stayed"
	case r.Fetched > 0:
		return "document accepted"
	}
	return "no document written"
}

// bytesText is a size in plain words: "2 MiB", "64 KiB", "100 bytes".
func bytesText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return countNoun(int(n), "byte", "bytes")
}
