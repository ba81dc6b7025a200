// Package metrics is upcheck's Prometheus surface: counters and gauges fed
// by the lease, the check and the HTTP layer through small observer
// interfaces (so those packages do not depend on Prometheus), plus gauges
// read from the database at scrape time.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// scrapeTimeout bounds the database read behind a scrape.
const scrapeTimeout = 2 * time.Second

// Metrics holds every series upcheck exports.
type Metrics struct {
	registry          *prometheus.Registry
	checkRuns         *prometheus.CounterVec
	checkDuration     *prometheus.HistogramVec
	leaseAcquisitions *prometheus.CounterVec
	leaseRenewals     *prometheus.CounterVec
	leaseHeld         prometheus.Gauge
	sourceFetches     *prometheus.CounterVec
	httpRequests      *prometheus.CounterVec
	deliveries        *prometheus.CounterVec
}

// SummaryReader reads the stored summary from the database, not from a
// cache (store.Store.Summary).
type SummaryReader func(ctx context.Context) (readmodel.Summary, error)

// FeedsReader reads the advisory feeds as Source health lists them
// (store.Store.Feeds).
type FeedsReader func(ctx context.Context) ([]readmodel.FeedRow, error)

// Option configures New.
type Option func(*stored)

// WithFeeds adds the feeds' gauges (upcheck_feed_*), read at each scrape.
func WithFeeds(feeds FeedsReader) Option { return func(s *stored) { s.feeds = feeds } }

// New registers every series. summary feeds the component and source
// gauges and database_up at each scrape.
func New(summary SummaryReader, opts ...Option) *Metrics {
	st := &stored{summary: summary}
	for _, o := range opts {
		o(st)
	}
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		checkRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "upcheck_check_runs_total", Help: "Update checks by trigger and how they ended (refused ones too).",
		}, []string{"trigger", "status"}),
		checkDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "upcheck_check_duration_seconds", Help: "Duration of checks that held the lease.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300},
		}, []string{"trigger"}),
		leaseAcquisitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "upcheck_lease_acquisitions_total", Help: "Lease acquisitions by result (acquired, busy, cooldown, skipped, error).",
		}, []string{"result"}),
		leaseRenewals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "upcheck_lease_renewals_total", Help: "Lease renewals by result (ok, lost, error).",
		}, []string{"result"}),
		leaseHeld: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "upcheck_lease_held", Help: "1 while this process holds the check lease.",
		}),
		sourceFetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "upcheck_source_fetches_total", Help: "Update source fetches by outcome (ok, not_modified, failed, cancelled).",
		}, []string{"outcome"}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "upcheck_http_requests_total", Help: "HTTP requests by route pattern and status.",
		}, []string{"route", "status"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "upcheck_notification_deliveries_total", Help: "Notification sends by channel kind and result (delivered, retry, failed, gone).",
		}, []string{"kind", "result"}),
	}
	m.registry.MustRegister(m.checkRuns, m.checkDuration, m.leaseAcquisitions, m.leaseRenewals, m.leaseHeld,
		m.sourceFetches, m.httpRequests, m.deliveries, st,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Delivered counts one send of a notification (notify.Observer).
func (m *Metrics) Delivered(kind, result string) { m.deliveries.WithLabelValues(kind, result).Inc() }

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// LeaseAcquire counts one acquisition by result.
func (m *Metrics) LeaseAcquire(result string) { m.leaseAcquisitions.WithLabelValues(result).Inc() }

// LeaseRenew counts one renewal by result.
func (m *Metrics) LeaseRenew(result string) { m.leaseRenewals.WithLabelValues(result).Inc() }

// LeaseHeld sets whether this process holds the lease.
func (m *Metrics) LeaseHeld(held bool) {
	if held {
		m.leaseHeld.Set(1)
	} else {
		m.leaseHeld.Set(0)
	}
}

// CheckEnded counts a check and, when it ran, its duration.
func (m *Metrics) CheckEnded(trigger readmodel.Trigger, status readmodel.CheckStatus, ran bool, d time.Duration) {
	m.checkRuns.WithLabelValues(string(trigger), string(status)).Inc()
	if ran {
		m.checkDuration.WithLabelValues(string(trigger)).Observe(d.Seconds())
	}
}

// SourceFetched counts one source's outcome.
func (m *Metrics) SourceFetched(outcome string) { m.sourceFetches.WithLabelValues(outcome).Inc() }

// HTTP counts requests by route pattern (never the raw path: codes and ids
// would make unbounded label values) and the status the client was sent.
// Only the application's error handler knows that status for an error (a
// wrapped database outage is a 503, a missing row a 404), so an error is
// handed to it here, as echo's RequestLogger does with HandleError, and the
// status counted is the one it wrote. The error is still returned for
// middleware further out; echo's error handlers ignore an error whose
// response is committed. Install it first, outside Recover, so that
// recovered panics are counted too.
func (m *Metrics) HTTP() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			err := next(c)
			if err != nil && !c.Response().Committed {
				c.Error(err)
			}
			status := c.Response().Status
			if err != nil && !c.Response().Committed {
				status = http.StatusInternalServerError // the error handler wrote nothing
			}
			route := c.Path()
			if route == "" {
				route = "unmatched"
			}
			m.httpRequests.WithLabelValues(route, strconv.Itoa(status)).Inc()
			return err
		}
	}
}

// stored collects the gauges read from the database at scrape time.
type stored struct {
	summary SummaryReader
	feeds   FeedsReader // nil: no feed gauges
}

var (
	descComponents = prometheus.NewDesc("upcheck_components", "Installed components by state (installed, updates, security, vulnerable, stale).", []string{"state"}, nil)
	descFailing    = prometheus.NewDesc("upcheck_failing_sources", "Update sources whose last fetch failed.", nil, nil)
	descDatabaseUp = prometheus.NewDesc("upcheck_database_up", "1 when the database answered this scrape.", nil, nil)
	descPending    = prometheus.NewDesc("upcheck_notifications_pending", "Notifications not delivered yet.", nil, nil)
	descOldest     = prometheus.NewDesc("upcheck_notifications_oldest_pending_seconds", "Age of the oldest notification not delivered yet (0: none).", nil, nil)
	descNFailing   = prometheus.NewDesc("upcheck_notifications_failing", "Notifications not delivered whose last attempt failed.", nil, nil)
	descExploited  = prometheus.NewDesc("upcheck_known_exploited_components",
		"Components affected by an open advisory exploited in the wild (in the KEV catalogue). Absent until the KEV catalogue (a kev feed) has been read.", nil, nil)
	descMalicious = prometheus.NewDesc("upcheck_malicious_components",
		"Components matched by an open advisory saying the package is malicious: remove them. Absent until an OSV feed (osv, osv-api) has been read.", nil, nil)
	descInputRefused = prometheus.NewDesc("upcheck_input_refused",
		"1 while serve refuses the site's input (lockfile or manifest): the installed components are those of the last input accepted.", []string{"input"}, nil)
	descTreePackages = prometheus.NewDesc("upcheck_tree_packages",
		"Package instances of the installed tree as last read: every package the lockfile installs, the components' own included. Absent while no tree was read: the dependencies are not checked.", nil, nil)
	descTreeFindings = prometheus.NewDesc("upcheck_tree_findings",
		"Package versions of the installed tree that need attention (upcheck_tree_attention under UPCHECK_LOCKFILE_DEV), each under its most urgent kind (malicious, exposed, known_exploited, vulnerable_no_fix, vulnerable). Absent while no tree was read; malicious absent until an OSV feed was read, known_exploited until the KEV catalogue was.", []string{"kind"}, nil)
	descExposure = prometheus.NewDesc("upcheck_oldest_security_problem_seconds",
		"How long this site has known of its oldest open security problem (a security update not installed, or an advisory not dismissed); 0: none.", nil, nil)
)

func (s *stored) Describe(ch chan<- *prometheus.Desc) {
	ch <- descComponents
	ch <- descFailing
	ch <- descDatabaseUp
	ch <- descPending
	ch <- descOldest
	ch <- descNFailing
	ch <- descExposure
	ch <- descExploited
	ch <- descMalicious
	ch <- descInputRefused
	ch <- descTreePackages
	ch <- descTreeFindings
	if s.feeds != nil {
		describeFeeds(ch)
	}
}

func (s *stored) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	sum, err := s.summary(ctx)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(descDatabaseUp, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(descDatabaseUp, prometheus.GaugeValue, 1)
	for state, v := range map[string]int{
		"installed": sum.Components, "updates": sum.UpdatesAvailable, "security": sum.SecurityUpdates,
		"vulnerable": sum.Vulnerable, "stale": sum.Stale,
	} {
		ch <- prometheus.MustNewConstMetric(descComponents, prometheus.GaugeValue, float64(v), state)
	}
	ch <- prometheus.MustNewConstMetric(descFailing, prometheus.GaugeValue, float64(sum.FailingSources))
	ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(sum.NotificationsPending))
	ch <- prometheus.MustNewConstMetric(descOldest, prometheus.GaugeValue, sum.OldestPendingSeconds)
	ch <- prometheus.MustNewConstMetric(descNFailing, prometheus.GaugeValue, float64(sum.NotificationsFailing))
	ch <- prometheus.MustNewConstMetric(descExposure, prometheus.GaugeValue, sum.OldestSecuritySeconds)
	// Each absent until a feed that can name them was read: no series
	// rather than a 0 nothing supports (Summary.KnownExploited, Malicious).
	if sum.KnownExploited != nil {
		ch <- prometheus.MustNewConstMetric(descExploited, prometheus.GaugeValue, float64(*sum.KnownExploited))
	}
	if sum.Malicious != nil {
		ch <- prometheus.MustNewConstMetric(descMalicious, prometheus.GaugeValue, float64(*sum.Malicious))
	}
	if sum.TreePackages != nil {
		ch <- prometheus.MustNewConstMetric(descTreePackages, prometheus.GaugeValue, float64(*sum.TreePackages))
	}
	collectTree(ch, sum.TreeCounts)
	for _, in := range readmodel.Inputs {
		refused := 0.0
		for _, r := range sum.InputRefusals {
			if r.Input == in {
				refused = 1
			}
		}
		ch <- prometheus.MustNewConstMetric(descInputRefused, prometheus.GaugeValue, refused, string(in))
	}
	if s.feeds != nil {
		collectFeeds(ctx, s.feeds, ch)
	}
}

// collectTree is upcheck_tree_findings by kind: no series while no tree
// was read (c nil), nor for a count a feed never read would give.
func collectTree(ch chan<- prometheus.Metric, c *readmodel.TreeCounts) {
	if c == nil {
		return
	}
	for _, k := range readmodel.TreeKinds {
		if (k == readmodel.KindMalicious && c.Malicious == nil) || (k == readmodel.KindKnownExploited && c.KnownExploited == nil) {
			continue
		}
		ch <- prometheus.MustNewConstMetric(descTreeFindings, prometheus.GaugeValue, float64(c.Of(k)), string(k))
	}
}
