package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// A service is one long-running part of serve (River's startstop,
// Miniflux's daemon): run works until its context ends; stop, when set,
// finishes what run started once run has returned (River's client, which
// Notify.Run starts and returns).
type service struct {
	name string
	run  func(ctx context.Context) error
	stop func(ctx context.Context) error
}

// runServices starts services in order, each run in a goroutine under a
// context of its own (derived from ctx, so that when ctx ends every run
// hears it at once, as a running check must), and lets them run until ctx
// ends or one of them fails. Then it stops them in reverse order, so that
// a service stops before the ones it was started after: it cancels one's
// context, waits for its run to return, and calls its stop, which gets
// ShutdownTimeout. A run's error stops the rest, and the first one is
// returned; a stop's error is logged.
func runServices(ctx context.Context, logger *slog.Logger, services []service) error {
	var (
		mu    sync.Mutex
		first error
	)
	failed := make(chan struct{})
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
			close(failed)
		}
	}
	type running struct {
		cancel context.CancelFunc
		done   chan struct{}
	}
	started := make([]running, 0, len(services))
	for _, s := range services {
		sctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := s.run(sctx); err != nil {
				fail(fmt.Errorf("%s: %w", s.name, err))
			}
		}()
		started = append(started, running{cancel, done})
	}
	select {
	case <-ctx.Done():
		logger.InfoContext(ctx, "shutting down")
	case <-failed:
	}
	for i := len(started) - 1; i >= 0; i-- {
		started[i].cancel()
		<-started[i].done
		if s := services[i]; s.stop != nil {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
			if err := s.stop(sctx); err != nil {
				logger.WarnContext(ctx, "stop "+s.name, "error", err)
			}
			cancel()
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return first
}
