package web

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// readyTimeout bounds the database ping behind /readyz so a load balancer's
// probe gets its answer quickly even while the database hangs.
const readyTimeout = 2 * time.Second

// healthz answers while the process is alive; it touches nothing else.
func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 503 while the database does not, and 200 again as soon as
// it does, without a restart.
func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), readyTimeout)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		s.logger.WarnContext(ctx, "not ready: database unreachable", "error", err)
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": "database unreachable"})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
}
