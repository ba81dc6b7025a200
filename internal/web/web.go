// Package web is upcheck's HTTP surface on echo v4: routes.go lists every
// route, handlers return errors, and one error handler (errors.go) turns them
// into status codes, as JSON under /api/ and plain pages elsewhere.
package web

import (
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/store"
)

// Deps are what the handlers need.
type Deps struct {
	Store  *store.Store
	Logger *slog.Logger
}

// Server holds the handlers' dependencies.
type Server struct {
	store  *store.Store
	logger *slog.Logger
}

// New builds the HTTP handler.
func New(d Deps) http.Handler {
	s := &Server{store: d.Store, logger: d.Logger}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	s.routes(e)
	return e
}
