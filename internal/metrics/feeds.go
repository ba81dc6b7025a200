package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
)

// The feeds' gauges, one series per configured feed kind (a bounded label:
// readmodel.AllFeedKinds).
var (
	descFeedInterrupted = prometheus.NewDesc("upcheck_feed_interrupted",
		"1 while the feed's last sync was interrupted before it finished, until a sync succeeds.", []string{"kind"}, nil)
	descFeedFailing = prometheus.NewDesc("upcheck_feed_failing",
		"1 while the feed's last sync failed.", []string{"kind"}, nil)
	descFeedLastSuccess = prometheus.NewDesc("upcheck_feed_last_success_timestamp_seconds",
		"When the feed last synced completely (Unix seconds); 0: never.", []string{"kind"}, nil)
)

func describeFeeds(ch chan<- *prometheus.Desc) {
	ch <- descFeedInterrupted
	ch <- descFeedFailing
	ch <- descFeedLastSuccess
}

// collectFeeds reads the feeds; when the database does not answer, the
// summary's database_up already says so and no feed series is sent (a
// stale 0 would read as "not interrupted").
func collectFeeds(ctx context.Context, read FeedsReader, ch chan<- prometheus.Metric) {
	feeds, err := read(ctx)
	if err != nil {
		return
	}
	for _, f := range feeds {
		kind := string(f.Kind)
		ch <- prometheus.MustNewConstMetric(descFeedInterrupted, prometheus.GaugeValue, flag(f.InterruptedAt != nil), kind)
		ch <- prometheus.MustNewConstMetric(descFeedFailing, prometheus.GaugeValue, flag(f.Failing), kind)
		last := 0.0
		if f.LastSuccessAt != nil {
			last = float64(f.LastSuccessAt.UnixNano()) / 1e9
		}
		ch <- prometheus.MustNewConstMetric(descFeedLastSuccess, prometheus.GaugeValue, last, kind)
	}
}

func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
