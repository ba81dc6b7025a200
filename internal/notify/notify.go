package notify

import (
	"context"
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
	"github.com/upcheck/upcheck/internal/readmodel"
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
//
// A channel (channelID) of some sites or of the fleet is planned for the
// registered sites' components too, every one (EventPlanSites): what is
// outstanding on its sites when it is added or enabled.
func (s *Service) Queue(ctx context.Context, tx *store.Tx, codes []string, channelID, epoch int64) (int, error) {
	ids, err := tx.EventPlan(ctx, store.LocalSite, codes, channelID, epoch)
	if err != nil {
		return 0, err
	}
	if channelID != 0 {
		ch, err := tx.Channel(ctx, channelID)
		if err != nil {
			return 0, err
		}
		if ch.Scope != readmodel.ScopeLocal {
			more, err := tx.EventPlanSites(ctx, nil, channelID, epoch)
			if err != nil {
				return 0, err
			}
			ids = append(ids, more...)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	return len(ids), s.insert(ctx, tx, ids)
}

// QueueComponents plans, in tx, the events that the current state of the
// components keys (results written earlier in tx) calls for: the local
// site's components' for the channels that see the local site (Queue),
// the registered sites' for the channels of some sites and of the fleet
// that see theirs (EventPlanSites: one event per channel, site and fact,
// or the fleet's digest naming the sites). epoch is the queuing check's.
func (s *Service) QueueComponents(ctx context.Context, tx *store.Tx, keys []store.ComponentKey, epoch int64) error {
	if codes := store.CodesOf(keys, store.LocalSite); len(codes) > 0 {
		if _, err := s.Queue(ctx, tx, codes, 0, epoch); err != nil {
			return err
		}
	}
	if sites, _ := store.RegisteredOf(keys); len(sites) == 0 {
		return nil
	}
	ok, err := tx.ChannelsBeyondLocal(ctx)
	if err != nil || !ok {
		return err
	}
	ids, err := tx.EventPlanSites(ctx, keys, 0, epoch)
	if err != nil || len(ids) == 0 {
		return err
	}
	return s.insert(ctx, tx, ids)
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

// QueueRegistryKeysChanged plans, in tx, the registry_keys.changed event of
// the npm registry whose keys tx just pinned in place of oldKeys.
func (s *Service) QueueRegistryKeysChanged(ctx context.Context, tx *store.Tx, registry string, oldKeys []string, epoch int64) error {
	ids, err := tx.EventPlanRegistryKeys(ctx, registry, oldKeys, epoch)
	if err != nil || len(ids) == 0 {
		return err
	}
	return s.insert(ctx, tx, ids)
}

// QueuePinDowngrade plans, in tx, the trust_downgrade event of a manifest
// sync that lowered the trust of the source at url for codes, recorded
// earlier in tx (store.Tx.PinDowngradePut).
func (s *Service) QueuePinDowngrade(ctx context.Context, tx *store.Tx, url string, codes []string) error {
	ids, err := tx.EventPlanPinDowngrade(ctx, store.LocalSite, url, codes)
	if err != nil || len(ids) == 0 {
		return err
	}
	return s.insert(ctx, tx, ids)
}

// QueueTreeExposed plans, in tx, the tree.exposed event of each new
// look-back finding (ids: tree_exposures rows written earlier in tx).
func (s *Service) QueueTreeExposed(ctx context.Context, tx *store.Tx, ids []int64, epoch int64) error {
	events, err := tx.EventPlanTreeExposed(ctx, ids, epoch)
	if err != nil || len(events) == 0 {
		return err
	}
	return s.insert(ctx, tx, events)
}

// QueueTreeBrings plans, in tx, a trust_downgrade event of each signal
// of the lockfile changes ids (tree_brings rows written earlier in tx).
func (s *Service) QueueTreeBrings(ctx context.Context, tx *store.Tx, ids []int64, epoch int64) error {
	events, err := tx.EventPlanTreeBrings(ctx, ids, epoch)
	if err != nil || len(events) == 0 {
		return err
	}
	return s.insert(ctx, tx, events)
}

// QueueTreeFindings plans, in tx, the tree.finding event of each counted
// finding (under mode) on site's tree that the tree's evaluation wrote new
// earlier in tx.
func (s *Service) QueueTreeFindings(ctx context.Context, tx *store.Tx, site int64, mode readmodel.DevMode, epoch int64) error {
	events, err := tx.EventPlanTreeFindings(ctx, site, mode, epoch)
	if err != nil || len(events) == 0 {
		return err
	}
	return s.insert(ctx, tx, events)
}

// QueueSiteTreeFindings plans, in tx, the tree events of the channels of
// some sites and of the fleet (docs/notifications.md "Sites"): each
// counted finding (under mode) new to a site, new to the fleet in tx or
// on a site of moved (whose tree moved), is a tree.finding event naming
// its site on each channel subscribed to it, and one fleet.finding event
// per finding naming its sites on each channel of the fleet. Nothing is
// read when every enabled channel is the local site's.
func (s *Service) QueueSiteTreeFindings(ctx context.Context, tx *store.Tx, moved []int64, mode readmodel.DevMode, epoch int64) error {
	ok, err := tx.ChannelsBeyondLocal(ctx)
	if err != nil || !ok {
		return err
	}
	site, err := tx.EventPlanSiteTreeFindings(ctx, moved, mode, epoch)
	if err != nil {
		return err
	}
	fleet, err := tx.EventPlanFleetFindings(ctx, moved, mode, epoch)
	if err != nil {
		return err
	}
	return s.insert(ctx, tx, append(site, fleet...))
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
		// Events still held on a channel that is enabled now: sent
		// now.
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
		ch, err := tx.Channel(ctx, channelID)
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
