package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// handleError is echo's single error handler: it maps an error to a status
// and answers in JSON under /api/ (and for operations endpoints) or as a short
// plain page elsewhere. Users never see internal error text.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, message := http.StatusInternalServerError, "internal error"
	var he *echo.HTTPError
	if errors.As(err, &he) {
		status = he.Code
		if m, ok := he.Message.(string); ok {
			message = m
		} else {
			message = http.StatusText(status)
		}
	}
	if status >= 500 {
		s.logger.ErrorContext(c.Request().Context(), "request failed", "method", c.Request().Method, "path", c.Path(), "status", status, "error", err)
	}
	var werr error
	if strings.HasPrefix(c.Request().URL.Path, "/api/") || c.Request().Method == http.MethodHead {
		werr = c.JSON(status, map[string]string{"error": message})
	} else {
		werr = c.String(status, message)
	}
	if werr != nil {
		s.logger.WarnContext(c.Request().Context(), "write error response", "error", werr)
	}
}
