package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/views"
)

// notificationsShown bounds the deliveries listed on the page.
const notificationsShown = 100

// notificationsPage lists the channels and deliveries, with what the last
// post left in the flash: a notice or a form error, and a new channel's
// signing secret and full target, shown this once.
func (s *Server) notificationsPage(c echo.Context) error {
	f, _ := s.takeFlash(c, views.PathNotifications)
	return s.renderNotifications(c, http.StatusOK, f)
}

// notifyDone answers a post of the page: a redirect to the page carrying f
// in the flash, or, for a request without a browser session (an API
// token, which cannot carry a flash), the page itself with f, not cached.
func (s *Server) notifyDone(c echo.Context, f flash) error {
	if s.auth.SessionToken(c.Request()) != "" {
		return s.redirectWithFlash(c, views.PathNotifications, f)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	status := http.StatusOK
	if f.Error != "" {
		status = http.StatusUnprocessableEntity
	}
	return s.renderNotifications(c, status, f)
}

// renderNotifications renders the page with what f says: a notice or a
// form error, and a new channel's secret and full target.
func (s *Server) renderNotifications(c echo.Context, status int, f flash) error {
	p := views.NotificationsProps{Notice: f.Notice, FormError: f.Error, NewSecret: f.Values["secret"], NewTarget: f.Values["target"]}
	if f.Error != "" { // the refused form, filled in again
		p.Form = views.ChannelForm{Kind: f.Values["kind"], URL: f.Values["url"], To: f.Values["to"], Events: f.Values["events"], Name: f.Values["name"],
			MinEPSS: f.Values["min_epss"], Scope: f.Values["scope"], Sites: f.Values["sites"]}
	}
	// The channels (and their deliveries) whose sites the principal sees.
	channels, err := s.visibleChannels(c)
	if err != nil {
		return err
	}
	events, err := s.visibleEvents(c, notificationsShown)
	if err != nil {
		return err
	}
	p.Layout = layout(c)
	p.CanManage = p.Layout.User.CanManage
	principal, _ := auth.PrincipalFrom(c)
	p.MayChooseFleet = !principal.Sites.Limited()
	p.MayChooseLocal = principal.MaySee(store.LocalSite)
	// A target is a credential: viewers see a webhook's scheme and host,
	// admins a masked form; the whole only once, at creation.
	for i, ch := range channels {
		channels[i].Target = notify.ShownTarget(ch.Kind, ch.Target, p.CanManage)
	}
	p.Channels, p.Deliveries = channels, events
	return render(c, status, views.Notifications(p))
}

// actorContext is the request's context with the signed-in user as the
// actor of the audit rows notify writes.
func actorContext(c echo.Context) echo.Context {
	p, _ := auth.PrincipalFrom(c)
	c.SetRequest(c.Request().WithContext(notify.WithActor(c.Request().Context(), p.UserID)))
	return c
}

// addChannel adds a channel from the form and redirects to the page, which
// shows the new channel's signing secret and full target once (the flash:
// never in a URL, gone on reload, the page not cached).
func (s *Server) addChannel(c echo.Context) error {
	ch := store.NewChannel{Kind: c.FormValue("kind"), Target: c.FormValue("url"), Events: c.FormValue("events"), Name: c.FormValue("name")}
	if ch.Kind == "email" {
		ch.Target = c.FormValue("to")
	}
	refill := func(msg string) error {
		return s.notifyDone(c, flash{Error: msg, Values: map[string]string{
			"kind": ch.Kind, "url": c.FormValue("url"), "to": c.FormValue("to"), "events": ch.Events, "name": ch.Name,
			"min_epss": c.FormValue("min_epss"), "scope": c.FormValue("scope"), "sites": c.FormValue("sites")}})
	}
	var err error
	// The sites, within the principal's: a site it may not see is
	// refused as one that does not exist, in words on the form; the
	// fleet, asked by a limited principal, is 403 (the form offers it
	// only to those who see every site).
	if ch.Scope, ch.SiteIDs, err = s.channelScope(c, c.FormValue("scope"), strings.Split(c.FormValue("sites"), ",")); err != nil {
		if isNotFound(err) {
			return refill("The channel was not added: " + err.(*echo.HTTPError).Message.(string))
		}
		return err
	}
	if ch.MinEPSS, err = minEPSSValue(c.FormValue("min_epss")); err == nil {
		var created notify.Created
		created, err = s.notify.AddChannel(actorContext(c).Request().Context(), ch)
		if err == nil {
			return s.channelAdded(c, created)
		}
	}
	if errors.Is(err, notify.ErrInvalidChannel) || errors.Is(err, notify.ErrNoSMTP) {
		return refill(invalidChannelText(err))
	}
	return err
}

// minEPSSValue reads the form's EPSS threshold: empty is none.
func minEPSSValue(v string) (*float64, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= 0 && f <= 1) {
		return nil, fmt.Errorf("%w: the EPSS threshold must be a probability from 0 to 1, such as 0.1, not %q", notify.ErrInvalidChannel, v)
	}
	return &f, nil
}

// channelAdded shows the new channel's secret and target once.
func (s *Server) channelAdded(c echo.Context, created notify.Created) error {
	added, err := s.store.Channel(c.Request().Context(), created.ID)
	if err != nil {
		return err
	}
	notice := "Channel “" + added.Name + "” added."
	if created.Queued > 0 {
		notice += " " + onTheirWay(created.Queued) + " to it."
	}
	values := map[string]string{"target": added.Target}
	if created.Secret != "" {
		values["secret"] = created.Secret
	}
	return s.notifyDone(c, flash{Notice: notice, Values: values})
}

// channelID reads the :id of a channel route.
func channelID(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return 0, echo.NewHTTPError(http.StatusBadRequest, "The channel id must be a number.")
	}
	return id, nil
}

func (s *Server) testChannel(c echo.Context) error {
	id, err := channelID(c)
	if err != nil {
		return err
	}
	if _, err := s.visibleChannel(c, id); err != nil {
		return err
	}
	if _, err := s.notify.QueueTest(actorContext(c).Request().Context(), id); err != nil {
		return err
	}
	return s.notifyDone(c, flash{Notice: "Test event queued: it is sent within seconds."})
}

func (s *Server) enableChannel(c echo.Context) error  { return s.setChannelEnabled(c, true) }
func (s *Server) disableChannel(c echo.Context) error { return s.setChannelEnabled(c, false) }

func (s *Server) setChannelEnabled(c echo.Context, enabled bool) error {
	id, err := channelID(c)
	if err != nil {
		return err
	}
	if _, err := s.visibleChannel(c, id); err != nil {
		return err
	}
	queued, err := s.notify.SetEnabled(actorContext(c).Request().Context(), id, enabled)
	if err != nil {
		return err
	}
	notice := "Channel disabled: nothing is sent to it until it is enabled again; what falls due meanwhile is held for it."
	if enabled {
		notice = "Channel enabled: nothing was outstanding for it."
		if queued > 0 {
			notice = "Channel enabled: " + onTheirWay(queued) + " to it."
		}
	}
	return s.notifyDone(c, flash{Notice: notice})
}

// deleteChannelConfirm asks before a channel is deleted: the page a Delete
// link opens, whose form posts the deletion with confirmed=yes.
func (s *Server) deleteChannelConfirm(c echo.Context) error {
	id, err := channelID(c)
	if err != nil {
		return err
	}
	ch, err := s.visibleChannel(c, id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.Confirm(views.ConfirmProps{
		Layout:   layout(c),
		Nav:      views.NavNotify,
		Title:    "Delete the channel “" + ch.Name + "”?",
		Question: "Nothing more is sent to it, and its deliveries are deleted with it. This cannot be undone: to send to it again, add it again (a webhook then gets a new signing secret).",
		Action:   views.ChannelPath(id, "delete"),
		Button:   "Delete the channel",
		Cancel:   views.PathNotifications,
	}))
}

// deleteChannel deletes a channel once confirmed; a post without
// confirmed=yes is sent to the question.
func (s *Server) deleteChannel(c echo.Context) error {
	id, err := channelID(c)
	if err != nil {
		return err
	}
	if c.FormValue("confirmed") != "yes" {
		return c.Redirect(http.StatusSeeOther, views.ChannelPath(id, "delete"))
	}
	ch, err := s.visibleChannel(c, id)
	if err != nil {
		return err
	}
	if err := s.notify.DeleteChannel(actorContext(c).Request().Context(), id); err != nil {
		return err
	}
	return s.notifyDone(c, flash{Notice: "Channel “" + ch.Name + "” deleted."})
}

func (s *Server) retryDelivery(c echo.Context) error {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "The event id is not valid.")
	}
	if err := s.visibleEvent(c, id); err != nil {
		return err
	}
	if err := s.notify.Retry(c.Request().Context(), id); err != nil {
		return err
	}
	return s.notifyDone(c, flash{Notice: "Delivery queued again."})
}

// onTheirWay is "1 outstanding event is on its way" or "3 outstanding
// events are on their way".
func onTheirWay(n int) string {
	if n == 1 {
		return "1 outstanding event is on its way"
	}
	return strconv.Itoa(n) + " outstanding events are on their way"
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
