package web

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// pathOpenAPI serves the API's description. It is public: it is the same
// document for every installation (it is in the repository) and names no
// site's data, so a client generator can read it before it has a token.
const pathOpenAPI = "/api/openapi.json"

// openAPIDocument is the OpenAPI 3.1 description of every route under
// /api/ and of the operations endpoints. The web tests validate every
// answer the API gives them against it, and check that it lists exactly
// the routes routes.go serves.
//
//go:embed openapi.json
var openAPIDocument []byte

func (s *Server) openAPI(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-cache")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPIDocument)
}
