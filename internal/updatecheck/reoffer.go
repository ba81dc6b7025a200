package updatecheck

import (
	"context"
	"time"
)

// ReofferInterval is how often the scheduler looks for results whose
// offer changed with time: a release waiting for its soak is offered, and
// notified, within this of the moment it soaked.
const ReofferInterval = time.Minute

// Reoffer evaluates again, from the stored documents, every component
// whose result said a release would soak by now (component_results.
// next_change_at, on the database's clock), and reports how many results
// it wrote. A release that stops waiting is offered then, and its
// notification is raised once: the written result queues its event as any
// other write does, and an event is never queued twice. Several instances
// may run it at once: their writes are guarded and the same.
func (s *Syncer) Reoffer(ctx context.Context) (int, error) {
	todo, err := s.store.OfferChanged(ctx)
	if err != nil || len(todo) == 0 {
		return 0, err
	}
	results, err := s.evaluateFromStored(ctx, todo)
	if err != nil || len(results) == 0 {
		return 0, err
	}
	defer s.reads.Changed()
	ctx, countSites := s.withCounts(ctx)
	defer countSites()
	for _, r := range results {
		countsDue(ctx, r.Site)
	}
	return s.writeStored(ctx, results)
}

// reoffer runs Reoffer for the schedule.
func (s *Scheduler) reoffer(ctx context.Context) {
	n, err := NewSyncer(s.checker).Reoffer(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		s.logger.WarnContext(ctx, "re-evaluating the results whose releases soaked", "error", err)
	case n > 0:
		s.logger.InfoContext(ctx, "releases soaked: results evaluated again", "results", n)
	}
}
