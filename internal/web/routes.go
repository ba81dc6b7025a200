package web

import "github.com/labstack/echo/v4"

// routes is the whole HTTP surface. Permissions are attached here, per
// group, never inside handlers.
func (s *Server) routes(e *echo.Echo) {
	// Operations: no session, no database for /healthz.
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
}
