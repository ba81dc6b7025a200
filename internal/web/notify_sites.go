package web

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// A channel's sites and who sees the channel (docs/notifications.md
// "Sites"): a principal limited to some sites sees, makes and acts on
// only the channels whose sites are all among its own; another channel
// is answered as one that does not exist (404), as the sites' routes
// answer a site the principal may not see.

// maySeeChannel reports whether p may see ch: the fleet's only when p sees
// every site, the local site's when it sees the local site, a channel of
// some sites when it sees each of them (one left without sites, only when
// p sees every site).
func maySeeChannel(p auth.Principal, ch readmodel.ChannelRow) bool {
	switch ch.Scope {
	case readmodel.ScopeFleet:
		return !p.Sites.Limited()
	case readmodel.ScopeSites:
		// One whose sites were all removed: whose they were is not
		// known any more, so only a principal that sees every site.
		if len(ch.SiteIDs) == 0 {
			return !p.Sites.Limited()
		}
		for _, id := range ch.SiteIDs {
			if !p.MaySee(id) {
				return false
			}
		}
		return true
	}
	return p.MaySee(store.LocalSite)
}

// visibleChannels are the channels the request's principal may see.
func (s *Server) visibleChannels(c echo.Context) ([]readmodel.ChannelRow, error) {
	channels, err := s.store.Channels(c.Request().Context())
	if err != nil {
		return nil, err
	}
	p, _ := auth.PrincipalFrom(c)
	out := channels[:0]
	for _, ch := range channels {
		if maySeeChannel(p, ch) {
			out = append(out, ch)
		}
	}
	return out, nil
}

// visibleEvents are the newest limit events of the channels the request's
// principal may see.
func (s *Server) visibleEvents(c echo.Context, limit int) ([]readmodel.DeliveryRow, error) {
	p, _ := auth.PrincipalFrom(c)
	if !p.Sites.Limited() {
		return s.store.Events(c.Request().Context(), limit)
	}
	channels, err := s.visibleChannels(c)
	if err != nil {
		return nil, err
	}
	seen := make(map[int64]bool, len(channels))
	for _, ch := range channels {
		seen[ch.ID] = true
	}
	// Read past the others' events: the limit is of those shown.
	events, err := s.store.Events(c.Request().Context(), 500)
	if err != nil {
		return nil, err
	}
	out := events[:0]
	for _, e := range events {
		if seen[e.ChannelID] && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

// visibleChannel reads channel id when the request's principal may see
// it; 404 in words when there is none or it may not (the same answer).
func (s *Server) visibleChannel(c echo.Context, id int64) (readmodel.ChannelRow, error) {
	ch, err := s.channel(c.Request().Context(), id)
	if err != nil {
		return readmodel.ChannelRow{}, err
	}
	if p, _ := auth.PrincipalFrom(c); !maySeeChannel(p, ch) {
		return readmodel.ChannelRow{}, unknownChannel(id, store.ErrNotFound)
	}
	return ch, nil
}

// visibleEvent refuses, as an unknown event (404), the event id of a
// channel the request's principal may not see.
func (s *Server) visibleEvent(c echo.Context, id uuid.UUID) error {
	channel, err := s.store.EventChannel(c.Request().Context(), id)
	if err == nil {
		_, err = s.visibleChannel(c, channel)
	}
	if err != nil && (errors.Is(err, store.ErrNotFound) || isNotFound(err)) {
		return echo.NewHTTPError(http.StatusNotFound, "No failed delivery has the id "+id.String()+".").WithInternal(err)
	}
	return err
}

// isNotFound reports whether err is an HTTP 404.
func isNotFound(err error) bool {
	var he *echo.HTTPError
	return errors.As(err, &he) && he.Code == http.StatusNotFound
}

// errFleetLimited refuses a channel of the fleet to a principal limited to
// some sites: it would be told of sites it may not see.
var errFleetLimited = echo.NewHTTPError(http.StatusForbidden,
	"A user or token limited to some sites cannot subscribe a channel to the fleet: it would be told of every site. Name its sites.")

// channelScope is the scope and sites a new channel asks for (scope "":
// the named sites when there are, else the local site), within what the
// request's principal may see: the fleet is refused to a limited
// principal (403), and a site it may not see is answered as one that does
// not exist (404, the same words).
func (s *Server) channelScope(c echo.Context, scope string, names []string) (readmodel.ChannelScope, []int64, error) {
	out := readmodel.ChannelScope(strings.TrimSpace(scope))
	if out == "" {
		out = readmodel.ScopeLocal
		if len(nonBlank(names)) > 0 {
			out = readmodel.ScopeSites
		}
	}
	p, _ := auth.PrincipalFrom(c)
	switch out {
	case readmodel.ScopeFleet:
		if p.Sites.Limited() {
			return "", nil, errFleetLimited
		}
	case readmodel.ScopeLocal:
		if !p.MaySee(store.LocalSite) {
			return "", nil, unknownSiteError(store.LocalSiteName)
		}
	}
	ids, err := s.notify.SiteIDs(c.Request().Context(), names)
	if errors.Is(err, notify.ErrUnknownSite) {
		return "", nil, echo.NewHTTPError(http.StatusNotFound, unknownSiteText(err)).WithInternal(err)
	}
	if err != nil {
		return "", nil, err
	}
	for i, id := range ids {
		if !p.MaySee(id) {
			return "", nil, unknownSiteError(nonBlank(names)[i])
		}
	}
	return out, ids, nil
}

// unknownSiteError is the 404 of a site name no site has, or one the
// principal may not see.
func unknownSiteError(name string) error {
	return echo.NewHTTPError(http.StatusNotFound, "No site is named “"+name+"”.")
}

// unknownSiteText words notify.ErrUnknownSite as unknownSiteError does.
func unknownSiteText(err error) string {
	_, name, _ := strings.Cut(err.Error(), ": ")
	return "No site is named “" + strings.Trim(name, `"`) + "”."
}

// nonBlank are names trimmed, without blanks and duplicates, in order
// (as notify.Service.SiteIDs reads them).
func nonBlank(names []string) []string {
	var out []string
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
