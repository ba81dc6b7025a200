package notify

// Channels: adding, enabling, disabling and deleting them, each audited
// with the actor of its context.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// ErrInvalidChannel wraps what is wrong with a channel to add.
var ErrInvalidChannel = errors.New("invalid channel")

// Created is a channel just added: its id, its signing secret (webhooks;
// shown once) and how many outstanding events were queued for it.
type Created struct {
	ID     int64
	Secret string
	Queued int
}

// AddChannel checks and creates a channel (a webhook's signing secret is
// made here; a webhook whose host is a private address is refused unless
// this server may send to one), audited (channel.add) with the actor of
// ctx, and queues, in the same transaction, what is outstanding now:
// a channel created while problems exist receives each once (an email
// channel in one message, at once).
func (s *Service) AddChannel(ctx context.Context, c store.NewChannel) (Created, error) {
	if !slices.Contains(readmodel.AllChannelEvents(), readmodel.ChannelEvents(c.Events)) {
		return Created{}, fmt.Errorf("%w: events must be security or all, not %q", ErrInvalidChannel, c.Events)
	}
	if m := c.MinEPSS; m != nil && !(*m >= 0 && *m <= 1) {
		return Created{}, fmt.Errorf("%w: the EPSS threshold must be a probability from 0 to 1, not %v", ErrInvalidChannel, *m)
	}
	if err := checkScope(&c); err != nil {
		return Created{}, err
	}
	check := checkChannel
	if c.Kind == string(readmodel.ChannelEmail) {
		check = s.checkEmail
	}
	if err := check(&c); err != nil {
		return Created{}, err
	}
	if c.Kind != string(readmodel.ChannelEmail) {
		if err := s.checkAddress(ctx, c.Target); err != nil {
			return Created{}, err
		}
	}
	var out Created
	if c.Kind == string(readmodel.ChannelWebhook) {
		c.Secret = NewSecret()
		out.Secret = c.Secret
	}
	err := s.store.WithTx(ctx, func(tx *store.Tx) error {
		var err error
		if out.ID, err = tx.ChannelCreate(ctx, c); err != nil {
			return err
		}
		if out.Queued, err = s.Queue(ctx, tx, nil, out.ID, 0); err != nil {
			return err
		}
		if c.Kind == string(readmodel.ChannelEmail) {
			if _, err = s.gather(ctx, tx, out.ID, false); err != nil {
				return err
			}
		}
		return audit(ctx, tx, AuditChannelAdd, readmodel.ChannelRow{ID: out.ID, Name: c.Name, Kind: c.Kind, Target: c.Target})
	})
	if err != nil {
		return Created{}, err
	}
	return out, nil
}

// SetEnabled turns a channel on or off, audited (channel.enable,
// channel.disable) with the actor of ctx. A channel turned on receives, at
// once and once each, what is outstanding for it: the problems found
// while it was off (none was queued for it then), and the events held
// because it was off when their turn came (each gets one new job; the
// hold and this release take the channel's row lock in turn, so none is
// missed or sent twice). It returns how many events are on their way.
func (s *Service) SetEnabled(ctx context.Context, id int64, enabled bool) (int, error) {
	queued := 0
	err := s.store.WithTx(ctx, func(tx *store.Tx) error {
		if err := tx.ChannelSetEnabled(ctx, id, enabled); err != nil {
			return err
		}
		ch, err := tx.Channel(ctx, id)
		if err != nil {
			return err
		}
		action := AuditChannelDisable
		if enabled {
			action = AuditChannelEnable
			if queued, err = s.release(ctx, tx, id); err != nil {
				return err
			}
			n, err := s.Queue(ctx, tx, nil, id, 0)
			if err != nil {
				return err
			}
			queued += n
			if _, err = s.gather(ctx, tx, id, false); err != nil { // an email channel's outstanding events, in one message
				return err
			}
		}
		return audit(ctx, tx, action, ch)
	})
	return queued, err
}

// release queues again, in tx, the events and email messages held while
// their channel (channelID, or every enabled channel when 0) was off, and
// returns how many events that sends.
func (s *Service) release(ctx context.Context, tx *store.Tx, channelID int64) (int, error) {
	events, err := tx.EventReleaseHeld(ctx, channelID)
	if err != nil {
		return 0, err
	}
	if err := s.insert(ctx, tx, events); err != nil {
		return 0, err
	}
	messages, inMessages, err := tx.MessageReleaseHeld(ctx, channelID)
	if err != nil || len(messages) == 0 {
		return len(events), err
	}
	return len(events) + inMessages, s.insertEmail(ctx, tx, messages)
}

// DeleteChannel deletes a channel and its events, audited
// (channel.remove) with the actor of ctx; store.ErrNotFound when there is
// none.
func (s *Service) DeleteChannel(ctx context.Context, id int64) error {
	return s.store.WithTx(ctx, func(tx *store.Tx) error {
		ch, err := tx.Channel(ctx, id)
		if err != nil {
			return err
		}
		if err := tx.ChannelDelete(ctx, id); err != nil {
			return err
		}
		return audit(ctx, tx, AuditChannelRemove, ch)
	})
}

// Audit actions of channels, in audit_log.action.
const (
	AuditChannelAdd     = readmodel.AuditChannelAdd
	AuditChannelRemove  = readmodel.AuditChannelRemove
	AuditChannelEnable  = readmodel.AuditChannelEnable
	AuditChannelDisable = readmodel.AuditChannelDisable
	AuditChannelTest    = readmodel.AuditChannelTest
)

type actorKey struct{}

// WithActor says who acts in ctx: the user id that the audit rows of
// channel changes name (0, the default, is nobody: the command line).
func WithActor(ctx context.Context, userID int64) context.Context {
	return context.WithValue(ctx, actorKey{}, userID)
}

func actor(ctx context.Context) int64 {
	id, _ := ctx.Value(actorKey{}).(int64)
	return id
}

// audit records a change of ch in tx, by the actor of ctx. The target is
// kept as an admin sees it afterwards (ShownTarget): a webhook URL is a
// credential, and the audit log keeps it for a year.
func audit(ctx context.Context, tx *store.Tx, action readmodel.AuditAction, ch readmodel.ChannelRow) error {
	return tx.AuditAppend(ctx, actor(ctx), action, map[string]any{
		"channel_id": ch.ID, "name": ch.Name, "kind": ch.Kind, "target": ShownTarget(ch.Kind, ch.Target, true)})
}

// checkAddress refuses a webhook or chat URL whose host is (or resolves
// to) a private address when this server's fetcher refuses to send to one:
// it could never be delivered to.
func (s *Service) checkAddress(ctx context.Context, target string) error {
	err := s.fetcher.CheckPublic(ctx, target)
	var private *fetch.PrivateAddressError
	if errors.As(err, &private) {
		addr := "a private address (loopback or an internal network)"
		if private.Addr.IsValid() {
			addr = private.Addr.String() + ", a private address (loopback or an internal network)"
		}
		return fmt.Errorf("%w: the URL’s host is %s, and this server does not send to private addresses; set UPCHECK_ALLOW_PRIVATE_SOURCES=1 to allow it",
			ErrInvalidChannel, addr)
	}
	return nil // a host that does not resolve now is the delivery's to report
}

// checkChannel refuses a channel that could never be delivered to, and
// names it after its host when it has no name.
func checkChannel(c *store.NewChannel) error {
	if c.Kind != string(readmodel.ChannelWebhook) && c.Kind != string(readmodel.ChannelSlack) {
		return fmt.Errorf("%w: kind must be webhook, slack or email, not %q", ErrInvalidChannel, c.Kind)
	}
	u, err := url.Parse(c.Target)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("%w: the URL must be an absolute http or https URL, not %q", ErrInvalidChannel, c.Target)
	case u.User != nil:
		return fmt.Errorf("%w: the URL must not carry a user name or password before its host", ErrInvalidChannel)
	case len(c.Target) > 2000 || len(c.Name) > 200:
		return fmt.Errorf("%w: the URL or the name is too long", ErrInvalidChannel)
	}
	if c.Name == "" {
		c.Name = u.Hostname()
	}
	return nil
}

// checkScope refuses a scope that is none of readmodel.AllChannelScopes,
// a channel of some sites that names none, and sites named for another
// scope; "" is the local site.
func checkScope(c *store.NewChannel) error {
	if c.Scope == "" {
		c.Scope = readmodel.ScopeLocal
	}
	switch {
	case !slices.Contains(readmodel.AllChannelScopes(), c.Scope):
		return fmt.Errorf("%w: the scope must be local, sites or fleet, not %q", ErrInvalidChannel, c.Scope)
	case c.Scope == readmodel.ScopeSites && len(c.SiteIDs) == 0:
		return fmt.Errorf("%w: a channel of some sites names at least one site", ErrInvalidChannel)
	case c.Scope != readmodel.ScopeSites && len(c.SiteIDs) > 0:
		return fmt.Errorf("%w: only a channel of some sites names sites (the local site's and the fleet's name none)", ErrInvalidChannel)
	}
	return nil
}

// ErrUnknownSite wraps a site name that no registered site has.
var ErrUnknownSite = errors.New("no site has this name")

// SiteIDs resolves the names of a channel's sites (trimmed, without
// duplicates) to their ids, in the order given; ErrUnknownSite names the
// first that is not registered.
func (s *Service) SiteIDs(ctx context.Context, names []string) ([]int64, error) {
	var clean []string
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(clean, n) {
			clean = append(clean, n)
		}
	}
	if len(clean) == 0 {
		return nil, nil
	}
	found, err := s.store.SiteIDs(ctx, clean)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, 0, len(clean))
	for _, n := range clean {
		id, ok := found[n]
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownSite, n)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
