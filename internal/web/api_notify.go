package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// Notification channels and deliveries as JSON, through the notify
// service (and the store's reads) as the Notifications page uses them.

// createdChannelJSON is the answer to POST …/channels.
type createdChannelJSON struct {
	channelJSON
	// Secret signs a webhook's posts; null for other kinds.
	Secret *string `json:"secret"`
	// Queued counts the outstanding events queued for the new channel.
	Queued int `json:"queued"`
}

// channelRequest is the body of POST …/channels: target is the URL of a
// webhook or Slack-style channel, or an email channel's recipients.
type channelRequest struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Target string `json:"target"`
	Events string `json:"events"`
	// MinEPSS is the channel's EPSS threshold (0 to 1); null or absent:
	// none.
	MinEPSS *float64 `json:"min_epss"`
	// Scope is local, sites or fleet; absent: sites when Sites names
	// some, else local.
	Scope string `json:"scope"`
	// Sites are the names of a channel of some sites.
	Sites []string `json:"sites"`
}

// canManage: the principal may manage, so sees targets as admins do.
func canManage(c echo.Context) bool {
	p, _ := auth.PrincipalFrom(c)
	return p.Can(auth.PermManage)
}

// apiChannels is GET /api/admin/notifications/channels.
func (s *Server) apiChannels(c echo.Context) error {
	channels, err := s.visibleChannels(c)
	if err != nil {
		return err
	}
	admin := canManage(c)
	out := make([]channelJSON, len(channels))
	for i, ch := range channels {
		out[i] = channelBody(ch, admin)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, map[string]any{"channels": out})
}

// apiAddChannel is POST /api/admin/notifications/channels: 201 with the
// channel, its whole target and its secret, shown this once.
func (s *Server) apiAddChannel(c echo.Context) error {
	var req channelRequest
	if err := decodeJSONBody(c, &req); err != nil {
		return err
	}
	scope, sites, err := s.channelScope(c, req.Scope, req.Sites)
	if err != nil {
		return err
	}
	ctx := actorContext(c).Request().Context()
	created, err := s.notify.AddChannel(ctx, store.NewChannel{Kind: req.Kind, Name: req.Name, Target: req.Target, Events: req.Events, MinEPSS: req.MinEPSS,
		Scope: scope, SiteIDs: sites})
	if errors.Is(err, notify.ErrInvalidChannel) || errors.Is(err, notify.ErrNoSMTP) {
		return echo.NewHTTPError(http.StatusUnprocessableEntity, invalidChannelText(err)).WithInternal(err)
	}
	if err != nil {
		return err
	}
	ch, err := s.channel(ctx, created.ID)
	if err != nil {
		return err
	}
	out := createdChannelJSON{channelJSON: channelBody(ch, true), Secret: opt(created.Secret), Queued: created.Queued}
	out.Target = ch.Target
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusCreated, out)
}

// apiTestChannel is POST …/channels/{id}/test: 202 with the test event's id.
func (s *Server) apiTestChannel(c echo.Context) error {
	id, err := channelID(c)
	if err != nil {
		return err
	}
	if _, err := s.visibleChannel(c, id); err != nil {
		return err
	}
	ctx := actorContext(c).Request().Context()
	event, err := s.notify.QueueTest(ctx, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]string{"event_id": event.String()})
}

func (s *Server) apiEnableChannel(c echo.Context) error  { return s.apiSetChannelEnabled(c, true) }
func (s *Server) apiDisableChannel(c echo.Context) error { return s.apiSetChannelEnabled(c, false) }

// apiSetChannelEnabled answers the channel as it is now, and how many
// outstanding events were queued for it (enabling queues what is
// outstanding; disabling none).
func (s *Server) apiSetChannelEnabled(c echo.Context, enabled bool) error {
	id, err := channelID(c)
	if err != nil {
		return err
	}
	if _, err := s.visibleChannel(c, id); err != nil {
		return err
	}
	ctx := actorContext(c).Request().Context()
	queued, err := s.notify.SetEnabled(ctx, id, enabled)
	if errors.Is(err, store.ErrNotFound) {
		return unknownChannel(id, err)
	}
	if err != nil {
		return err
	}
	ch, err := s.channel(ctx, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"channel": channelBody(ch, canManage(c)), "queued": queued})
}

// apiDeleteChannel is DELETE …/channels/{id}: 204; its events go with it.
func (s *Server) apiDeleteChannel(c echo.Context) error {
	id, err := channelID(c)
	if err != nil {
		return err
	}
	if _, err := s.visibleChannel(c, id); err != nil {
		return err
	}
	if err := s.notify.DeleteChannel(actorContext(c).Request().Context(), id); errors.Is(err, store.ErrNotFound) {
		return unknownChannel(id, err)
	} else if err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// apiDeliveries is GET /api/admin/notifications/deliveries: the newest
// events first, limit of them (1–500, default 100, as the page shows).
func (s *Server) apiDeliveries(c echo.Context) error {
	limit := notificationsShown
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			return echo.NewHTTPError(http.StatusBadRequest, "limit must be a number from 1 to 500.")
		}
		limit = n
	}
	events, err := s.visibleEvents(c, limit)
	if err != nil {
		return err
	}
	out := make([]deliveryJSON, len(events))
	for i, e := range events {
		out[i] = deliveryBody(e)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, map[string]any{"deliveries": out})
}

// apiRetryDelivery is POST …/deliveries/{id}/retry: a failed delivery is
// sent again (202); 404 when no failed delivery has that id.
func (s *Server) apiRetryDelivery(c echo.Context) error {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "The delivery id is not a UUID.")
	}
	if err := s.visibleEvent(c, id); err != nil {
		return err
	}
	if err := s.notify.Retry(c.Request().Context(), id); errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "No failed delivery has the id "+id.String()+".").WithInternal(err)
	} else if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]string{"event_id": id.String()})
}

// channel reads one channel; 404 in words when there is none.
func (s *Server) channel(ctx context.Context, id int64) (readmodel.ChannelRow, error) {
	ch, err := s.store.Channel(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return readmodel.ChannelRow{}, unknownChannel(id, err)
	}
	return ch, err
}

func unknownChannel(id int64, err error) error {
	return echo.NewHTTPError(http.StatusNotFound, "No channel has the id "+strconv.FormatInt(id, 10)+".").WithInternal(err)
}
