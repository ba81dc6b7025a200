package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/store"
)

// Timings are the delivery's durations; tests shorten them through
// UPCHECK_TEST_TIMINGS (delivery=, backoff=).
type Timings struct {
	// Delivery is the lease of one send: a job running for longer (its
	// worker died) is handed to another worker (River's RescueStuckJobsAfter).
	Delivery time.Duration
	// Backoff is the first retry's delay; later ones follow the schedule
	// 1, 4, 20, 120, 360, 720, 1440 times it (30 s: 30 s, 2 min, 10 min,
	// 1 h, 3 h, 6 h, 12 h).
	Backoff time.Duration
}

// DefaultTimings are the production constants.
func DefaultTimings() Timings { return Timings{Delivery: 5 * time.Minute, Backoff: 30 * time.Second} }

// MaxAttempts is how many times one event is sent before it is failed.
const MaxAttempts = 8

// sendTimeout bounds one send to a receiver.
const sendTimeout = 15 * time.Second

// jobTimeout bounds one job (the send and its bookkeeping); it must stay
// below the delivery lease, after which River hands the job to another
// worker.
func jobTimeout(t Timings) time.Duration { return min(sendTimeout+15*time.Second, t.Delivery/2) }

var backoffSteps = [...]int64{1, 4, 20, 120, 360, 720, 1440}

// retryPolicy is the backoff above, counted from when the attempt failed.
type retryPolicy struct{ base time.Duration }

func (p retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().Add(p.delay(job.Attempt))
}

// delay is the pause after the attempt-th attempt failed.
func (p retryPolicy) delay(attempt int) time.Duration {
	return time.Duration(backoffSteps[min(max(attempt-1, 0), len(backoffSteps)-1)]) * p.base
}

// deliveryArgs is one River job: send one event.
type deliveryArgs struct {
	EventID uuid.UUID `json:"event_id"`
}

// Kind names the job in River's tables.
func (deliveryArgs) Kind() string { return "upcheck.delivery" }

// Service queues events and, once started, delivers them.
type Service struct {
	observer Observer
	store    *store.Store
	river    *river.Client[pgx.Tx]
	fetcher  *fetch.Fetcher
	logger   *slog.Logger
	timings  Timings
	smtp     config.SMTP
	// publicURL is where operators reach the AdminCP
	// (UPCHECK_PUBLIC_URL), without a trailing slash; "" for unknown.
	publicURL string
}

// WithPublicURL gives the messages a link to each component's AdminCP
// page: u is UPCHECK_PUBLIC_URL (config.Config.PublicURL), "" for none.
func WithPublicURL(u string) Option {
	return func(s *Service) { s.publicURL = strings.TrimRight(u, "/") }
}

// adminURL is the AdminCP page of component code under publicURL (the
// page views.ComponentPath names), or "" when either is unknown.
func adminURL(publicURL, code string) string {
	if publicURL == "" || code == "" {
		return ""
	}
	return publicURL + "/admin/plugins/" + url.PathEscape(code)
}

// Observer hears how each send ended (metrics): result is delivered,
// retry, failed (the last attempt) or gone (410, channel disabled).
type Observer interface {
	Delivered(kind, result string)
}

type noObserver struct{}

func (noObserver) Delivered(string, string) {}

// Observe reports sends to o. Call it before Start.
func (s *Service) Observe(o Observer) { s.observer = o }

// Option configures a Service.
type Option func(*Service)

// New returns a Service on pool. Its River client delivers only after
// Start; before that (and in `upcheck check`) it only queues.
func New(pool *pgxpool.Pool, st *store.Store, f *fetch.Fetcher, timings Timings, logger *slog.Logger, opts ...Option) (*Service, error) {
	s := &Service{store: st, fetcher: f, logger: logger, timings: timings, observer: noObserver{}}
	for _, o := range opts {
		o(s)
	}
	if err := s.smtp.Validate(); err != nil {
		return nil, fmt.Errorf("notifications: %w", err)
	}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &deliveryWorker{s: s}); err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(workers, &emailWorker{s: s}); err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(workers, &overdueWorker{s: s}); err != nil {
		return nil, err
	}
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 16}},
		Workers:              workers,
		MaxAttempts:          MaxAttempts,
		RetryPolicy:          retryPolicy{base: timings.Backoff},
		JobTimeout:           jobTimeout(timings),
		RescueStuckJobsAfter: timings.Delivery,
		FetchPollInterval:    max(min(time.Second, timings.Backoff/2), 2*time.Millisecond),
		FetchCooldown:        max(min(100*time.Millisecond, timings.Backoff/4), time.Millisecond),
		Logger:               logger,
		PeriodicJobs: []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
			func() (river.JobArgs, *river.InsertOpts) { return overdueArgs{}, nil }, &river.PeriodicJobOpts{RunOnStart: true})},
	})
	if err != nil {
		return nil, fmt.Errorf("notifications: %w", err)
	}
	s.river = client
	return s, nil
}

// Start delivers queued events until Stop. It fails when the database
// cannot be reached; Run tries again.
func (s *Service) Start(ctx context.Context) error { return s.river.Start(ctx) }

// startRetry is the pause between attempts to start delivering while the
// database is away.
const startRetry = 2 * time.Second

// Run starts delivering, trying again every few seconds while the database
// cannot be reached (an outage at start must not stop the server), and
// returns once started or when ctx ends. Stop ends the deliveries.
func (s *Service) Run(ctx context.Context) {
	for {
		err := s.river.Start(ctx)
		if err == nil || ctx.Err() != nil {
			return
		}
		s.logger.WarnContext(ctx, "notifications cannot start yet; trying again", "error", err, "retry_in", startRetry)
		select {
		case <-ctx.Done():
			return
		case <-time.After(startRetry):
		}
	}
}

// Stop stops taking new deliveries and waits for the sends in flight (up
// to ctx's deadline, then cancels them: their jobs are rescued later).
func (s *Service) Stop(ctx context.Context) error {
	err := s.river.Stop(ctx)
	if ctx.Err() != nil {
		return s.river.StopAndCancel(context.WithoutCancel(ctx))
	}
	return err
}

// Queue plans, in tx, the events that the current state of codes calls for
// (every component when codes is nil, every channel when channelID is 0)
// and inserts one delivery job per new webhook or slack event in the same
// transaction; email events wait to be gathered (QueueRunEnd). epoch is the
// queuing check's, 0 for none.
func (s *Service) Queue(ctx context.Context, tx *store.Tx, codes []string, channelID, epoch int64) (int, error) {
	ids, err := tx.EventPlan(ctx, codes, channelID, epoch)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	return len(ids), s.insert(ctx, tx, ids)
}

// QueueSourceFailing plans, in tx, the source.failing event of the source at
// url, when it has failed for 24 hours.
func (s *Service) QueueSourceFailing(ctx context.Context, tx *store.Tx, url string, epoch int64) error {
	ids, err := tx.EventPlanSourceFailing(ctx, url, epoch)
	if err != nil || len(ids) == 0 {
		return err
	}
	return s.insert(ctx, tx, ids)
}

// queueOverdue plans the check.overdue event, when no check completed for
// 48 hours, and gathers the email events no check has gathered (the
// overdue event's, a manifest sync's, a check's that did not complete).
func (s *Service) queueOverdue(ctx context.Context) error {
	return s.store.WithTx(ctx, func(tx *store.Tx) error {
		ids, err := tx.EventPlanOverdue(ctx)
		if err != nil {
			return err
		}
		if err := s.insert(ctx, tx, ids); err != nil {
			return err
		}
		// Events held on a channel that is enabled now (held before
		// migration 00022, when they were failed instead): sent now.
		if _, err := s.release(ctx, tx, 0); err != nil {
			return err
		}
		_, err = s.gather(ctx, tx, 0, false)
		return err
	})
}

// overdueArgs is the hourly job that looks for an overdue check and gathers
// loose email events (River runs periodic jobs on its elected leader only;
// the event's key makes it once whoever runs it).
type overdueArgs struct{}

// Kind names the job in River's tables.
func (overdueArgs) Kind() string { return "upcheck.overdue" }

type overdueWorker struct {
	river.WorkerDefaults[overdueArgs]
	s *Service
}

func (w *overdueWorker) Work(ctx context.Context, _ *river.Job[overdueArgs]) error {
	return w.s.queueOverdue(ctx)
}

// QueueTest queues a test event for a channel; store.ErrNotFound when
// there is no such channel. It is audited (channel.test) with the actor
// of ctx (WithActor).
func (s *Service) QueueTest(ctx context.Context, channelID int64) (uuid.UUID, error) {
	var id uuid.UUID
	err := s.store.WithTx(ctx, func(tx *store.Tx) error {
		ch, err := tx.ChannelGet(ctx, channelID)
		if err != nil {
			return err
		}
		if id, err = tx.EventCreateTest(ctx, channelID); err != nil {
			return err
		}
		if err := s.insert(ctx, tx, []uuid.UUID{id}); err != nil {
			return err
		}
		if _, err = s.gather(ctx, tx, channelID, false); err != nil { // an email channel's test goes now
			return err
		}
		return audit(ctx, tx, AuditChannelTest, ch)
	})
	return id, err
}

// Retry sends a failed event again, from its first attempt, with the same
// event id; an email event's whole message is sent again, with the same
// Message-ID.
func (s *Service) Retry(ctx context.Context, id uuid.UUID) error {
	return s.store.WithTx(ctx, func(tx *store.Tx) error {
		if err := tx.EventRetry(ctx, id); err != nil {
			return err
		}
		message, err := tx.MessageRetry(ctx, id)
		if err != nil {
			return err
		}
		if message != uuid.Nil {
			return s.insertEmail(ctx, tx, []uuid.UUID{message})
		}
		return s.insert(ctx, tx, []uuid.UUID{id})
	})
}

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
	check := checkChannel
	if c.Kind == "email" {
		check = s.checkEmail
	}
	if err := check(&c); err != nil {
		return Created{}, err
	}
	if c.Kind != "email" {
		if err := s.checkAddress(ctx, c.Target); err != nil {
			return Created{}, err
		}
	}
	var out Created
	if c.Kind == "webhook" {
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
		if c.Kind == "email" {
			if _, err = s.gather(ctx, tx, out.ID, false); err != nil {
				return err
			}
		}
		return audit(ctx, tx, AuditChannelAdd, store.Channel{ID: out.ID, Name: c.Name, Kind: c.Kind, Target: c.Target})
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
		ch, err := tx.ChannelGet(ctx, id)
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
		ch, err := tx.ChannelGet(ctx, id)
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
	AuditChannelAdd     = "channel.add"
	AuditChannelRemove  = "channel.remove"
	AuditChannelEnable  = "channel.enable"
	AuditChannelDisable = "channel.disable"
	AuditChannelTest    = "channel.test"
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
func audit(ctx context.Context, tx *store.Tx, action string, ch store.Channel) error {
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
	if c.Kind != "webhook" && c.Kind != "slack" {
		return fmt.Errorf("%w: kind must be webhook, slack or email, not %q", ErrInvalidChannel, c.Kind)
	}
	if c.Events != "security" && c.Events != "all" {
		return fmt.Errorf("%w: events must be security or all, not %q", ErrInvalidChannel, c.Events)
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

// insert inserts the delivery jobs of the events among ids that are sent
// one by one (webhook and slack); email events are left to be gathered.
func (s *Service) insert(ctx context.Context, tx *store.Tx, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	ids, err := tx.EventSentAlone(ctx, ids)
	if err != nil || len(ids) == 0 {
		return err
	}
	params := make([]river.InsertManyParams, len(ids))
	for i, id := range ids {
		params[i] = river.InsertManyParams{Args: deliveryArgs{EventID: id}}
	}
	_, err = s.river.InsertManyTx(ctx, tx.Pgx(), params)
	return err
}
