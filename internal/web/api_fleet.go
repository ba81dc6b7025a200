package web

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// apiFleet is GET /api/admin/fleet: one page of the sites the principal
// may see with their counts, in the order, filter and search asked,
// per_page (1–500, default 100) and page (from 1); more: a next page
// exists. A read's answer is encoded once, for every request that
// shows it (its Read names the question, page and per_page included).
func (s *Server) apiFleet(c echo.Context) error {
	f, page, err := s.fleetQuery(c, 100, maxPageSize)
	if err != nil {
		return err
	}
	rows, err := s.reads.Fleet(c.Request().Context(), f)
	if err != nil {
		return err
	}
	body, err := s.fleetJSON.get(rows.Read, func() ([]byte, error) {
		sites := rows.Rows
		if sites == nil {
			sites = []readmodel.FleetRow{}
		}
		return json.Marshal(fleetPageBody{Sites: sites, Page: page, PerPage: f.Limit, More: rows.More})
	})
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSONBlob(http.StatusOK, body)
}

// fleetPageBody is GET /api/admin/fleet's answer.
type fleetPageBody struct {
	Sites   []readmodel.FleetRow `json:"sites"`
	Page    int                  `json:"page"`
	PerPage int                  `json:"per_page"`
	More    bool                 `json:"more"`
}

// apiFleetSummary is GET /api/admin/fleet/summary: the totals across the
// sites the principal may see. The local site's summary is
// GET /api/admin/plugins/updates/summary, as before.
func (s *Server) apiFleetSummary(c echo.Context) error {
	f, _, err := s.fleetQuery(c, 1, 1)
	if err != nil {
		return err
	}
	sum, err := s.reads.FleetSummary(c.Request().Context(), f.Scope, f)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, sum)
}

// apiFleetImpact is GET /api/admin/fleet/impact?advisory=ID or
// ?package=NAME[&range=R]: the sites the principal may see that it
// affects now and those that ever installed an affected version.
func (s *Server) apiFleetImpact(c echo.Context) error {
	q, asked, err := fleetImpactQuery(c)
	if err != nil {
		return err
	}
	if !asked {
		return echo.NewHTTPError(http.StatusBadRequest, "ask for an advisory or a package")
	}
	im, err := s.readFleetImpact(c, q)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, im)
}
