package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/views"
)

// notificationsShown bounds the deliveries listed on the page.
const notificationsShown = 100

func (s *Server) notificationsPage(c echo.Context) error {
	return s.renderNotifications(c, http.StatusOK, views.NotificationsProps{Notice: noticeText(c.QueryParam("done"))})
}

// renderNotifications renders the page with what p already says (a secret
// shown once, a form error).
func (s *Server) renderNotifications(c echo.Context, status int, p views.NotificationsProps) error {
	ctx := c.Request().Context()
	channels, err := s.store.Channels(ctx)
	if err != nil {
		return err
	}
	events, err := s.store.Events(ctx, notificationsShown)
	if err != nil {
		return err
	}
	p.Layout = layout(c)
	p.CanManage = p.Layout.User.CanManage
	for _, ch := range channels {
		p.Channels = append(p.Channels, views.ChannelRow{ID: ch.ID, Name: ch.Name, Kind: ch.Kind, Target: ch.Target,
			Events: ch.Events, Enabled: ch.Enabled, DisabledReason: ch.DisabledReason, CreatedAt: ch.CreatedAt})
	}
	for _, e := range events {
		p.Deliveries = append(p.Deliveries, views.DeliveryRow{ID: e.ID.String(), ChannelName: e.ChannelName, Type: e.Type,
			Subject: views.EventSubject(e.Key), State: e.State, Attempts: e.Attempts, LastError: e.LastError,
			LastAttempt: e.LastAttemptAt, NextAttempt: e.NextAttemptAt, CreatedAt: e.CreatedAt})
	}
	return render(c, status, views.Notifications(p))
}

// addChannel adds a channel from the form. The page is rendered in the
// answer, not redirected to, so that the signing secret is shown once and
// never travels in a URL.
func (s *Server) addChannel(c echo.Context) error {
	ch := store.NewChannel{Kind: c.FormValue("kind"), Target: c.FormValue("url"), Events: c.FormValue("events"), Name: c.FormValue("name")}
	if ch.Kind == "email" {
		ch.Target = c.FormValue("to")
	}
	created, err := s.notify.AddChannel(c.Request().Context(), ch)
	if errors.Is(err, notify.ErrInvalidChannel) || errors.Is(err, notify.ErrNoSMTP) {
		return s.renderNotifications(c, http.StatusUnprocessableEntity, views.NotificationsProps{FormError: invalidChannelText(err)})
	}
	if err != nil {
		return err
	}
	notice := "Channel added."
	if created.Queued > 0 {
		notice = "Channel added; " + strconv.Itoa(created.Queued) + " outstanding events are on their way to it."
	}
	return s.renderNotifications(c, http.StatusOK, views.NotificationsProps{NewSecret: created.Secret, Notice: notice})
}

func (s *Server) testChannel(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "channel id must be a number")
	}
	if _, err := s.notify.QueueTest(c.Request().Context(), id); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, views.PathNotifications+"?done=test")
}

func (s *Server) enableChannel(c echo.Context) error  { return s.setChannelEnabled(c, true) }
func (s *Server) disableChannel(c echo.Context) error { return s.setChannelEnabled(c, false) }

func (s *Server) setChannelEnabled(c echo.Context, enabled bool) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "channel id must be a number")
	}
	if _, err := s.notify.SetEnabled(c.Request().Context(), id, enabled); err != nil {
		return err
	}
	done := "disabled"
	if enabled {
		done = "enabled"
	}
	return c.Redirect(http.StatusSeeOther, views.PathNotifications+"?done="+done)
}

func (s *Server) deleteChannel(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "channel id must be a number")
	}
	if err := s.store.ChannelDelete(c.Request().Context(), id); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, views.PathNotifications+"?done=deleted")
}

func (s *Server) retryDelivery(c echo.Context) error {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "event id is not valid")
	}
	if err := s.notify.Retry(c.Request().Context(), id); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, views.PathNotifications+"?done=retry")
}

// noticeText confirms what a redirect says was done; only known words.
func noticeText(done string) string {
	switch done {
	case "test":
		return "Test event queued: it is sent within seconds."
	case "deleted":
		return "Channel deleted."
	case "enabled":
		return "Channel enabled: the problems outstanding now are on their way to it."
	case "disabled":
		return "Channel disabled: nothing is sent to it until it is enabled again."
	case "retry":
		return "Delivery queued again."
	}
	return ""
}

// invalidChannelText is the form's error without the package's prefix.
func invalidChannelText(err error) string {
	msg := err.Error()
	for _, sentinel := range []error{notify.ErrInvalidChannel, notify.ErrNoSMTP} {
		if p := sentinel.Error() + ": "; len(msg) > len(p) && msg[:len(p)] == p {
			msg = msg[len(p):]
		}
	}
	return "The channel was not added: " + msg + "."
}
