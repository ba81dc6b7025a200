package web

import (
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/views"
)

// importFormOverhead is what a multipart upload adds around its two files
// and two fields: boundaries, part headers, the CSRF token, the source's
// address.
const importFormOverhead = 64 << 10

// importBodyLimit is the most an import's request body may have: the
// document at the fetcher's cap, its signature at the .sig cap, and the
// form around them.
func (s *Server) importBodyLimit() int64 {
	return s.importer.Limit() + fetch.SignatureMaxBody + importFormOverhead
}

// sourceImportPage is the form that imports a document for the source
// named by ?url=. An outcome redirected here after a successful import
// (status, sequence, components) is shown above it.
func (s *Server) sourceImportPage(c echo.Context) error {
	q := c.QueryParams()
	src, err := s.sourceInUse(c, q.Get("url"))
	if err != nil {
		return err
	}
	p := views.SourceImportProps{Layout: layout(c), Source: src, MaxBytes: s.importer.Limit()}
	if st := q.Get("status"); st == string(updatecheck.Imported) || st == string(updatecheck.ImportUnchanged) {
		seq, _ := strconv.ParseInt(q.Get("sequence"), 10, 64)
		n, _ := strconv.Atoi(q.Get("components"))
		p.Outcome = &views.ImportOutcome{Status: st, Sequence: seq, Components: n}
	}
	return renderOK(c, views.SourceImport(p))
}

// sourceImport takes the uploaded document (and its signature) through
// the checker's import: the acceptance policy, evaluation and fenced write
// of a fetch. Accepted, it redirects (303) to the form with the outcome;
// refused, it answers 422 with the reason in words (the sentence of a
// fetch failure) and the stored document untouched; while a check runs,
// 409. A document over the fetcher's cap is refused as a fetched one is.
func (s *Server) sourceImport(c echo.Context) error {
	r := c.Request()
	sourceURL := r.FormValue("url") // bodyLimit read the form whole, or answered 413
	src, err := s.sourceInUse(c, sourceURL)
	if err != nil {
		return err
	}
	page := func(status int, o views.ImportOutcome) error {
		if fresh, err := s.sourceInUse(c, sourceURL); err == nil {
			src = fresh
		}
		return render(c, status, views.SourceImport(views.SourceImportProps{Layout: layout(c), Source: src,
			MaxBytes: s.importer.Limit(), Outcome: &o}))
	}
	if r.MultipartForm == nil {
		return echo.NewHTTPError(http.StatusBadRequest, "Send the document as a file of a multipart form.")
	}
	body, err := formFile(r.MultipartForm, "document", s.importer.Limit()+1)
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "Choose the update document to import.")
	}
	sig, err := formFile(r.MultipartForm, "signature", fetch.SignatureMaxBody+1)
	if err != nil && !errors.Is(err, http.ErrMissingFile) {
		return err
	}
	if int64(len(sig)) > fetch.SignatureMaxBody {
		return page(http.StatusUnprocessableEntity, views.ImportOutcome{Status: string(updatecheck.ImportRefused),
			Kind: string(readmodel.ErrorBadSignature), Detail: "the signature file is larger than a signature can be"})
	}
	p, _ := auth.PrincipalFrom(c)
	res, err := s.importer.Import(r.Context(), src.URL, body, string(sig), p.Email)
	if errors.Is(err, updatecheck.ErrUnknownSource) {
		return unknownSource(sourceURL)
	}
	if err != nil {
		return err
	}
	o := views.ImportOutcome{Status: string(res.Status), Sequence: res.Sequence, Components: res.Components,
		Kind: string(res.Kind), Args: res.Args, Detail: res.Detail}
	switch res.Status {
	case updatecheck.ImportRefused:
		return page(http.StatusUnprocessableEntity, o)
	case updatecheck.ImportBusy:
		return page(http.StatusConflict, o)
	}
	q := url.Values{"url": {src.URL}, "status": {string(res.Status)},
		"sequence": {strconv.FormatInt(res.Sequence, 10)}, "components": {strconv.Itoa(res.Components)}}
	return c.Redirect(http.StatusSeeOther, views.PathSourceImport+"?"+q.Encode())
}

// formFile reads at most limit bytes of an uploaded file; a missing one is
// http.ErrMissingFile.
func formFile(form *multipart.Form, field string, limit int64) ([]byte, error) {
	files := form.File[field]
	if len(files) == 0 {
		return nil, http.ErrMissingFile
	}
	f, err := files[0].Open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}

// sourceInUse is the source at address as source health shows it; 404 in
// words when no installed component uses it.
func (s *Server) sourceInUse(c echo.Context, address string) (readmodel.SourceRow, error) {
	sources, err := s.store.SourceHealth(c.Request().Context())
	if err != nil {
		return readmodel.SourceRow{}, err
	}
	for _, src := range sources {
		switch {
		case src.URL != address:
		case updatecheck.Importable(src.URL) != nil:
			return readmodel.SourceRow{}, echo.NewHTTPError(http.StatusUnprocessableEntity,
				"“"+address+"” is an npm package: upcheck reads it from its registry, and no document can be imported for it.")
		default:
			return src, nil
		}
	}
	return readmodel.SourceRow{}, unknownSource(address)
}

func unknownSource(address string) error {
	if address == "" {
		return echo.NewHTTPError(http.StatusBadRequest, "Name the update source: ?url=…")
	}
	return echo.NewHTTPError(http.StatusNotFound, "No installed component uses the update source “"+address+"”.")
}
