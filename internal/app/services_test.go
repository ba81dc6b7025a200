package app

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/upcheck/upcheck/internal/testing/testkit"
)

// record keeps what the services did, in order.
type record struct {
	mu     sync.Mutex
	events []string
}

func (r *record) add(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *record) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// waiting is a service whose run tells started and waits for its context.
func waiting(name string, r *record, started chan<- string) service {
	return service{
		name: name,
		run: func(ctx context.Context) error {
			started <- name
			<-ctx.Done()
			r.add(name + " ran")
			return nil
		},
		stop: func(context.Context) error { r.add(name + " stopped"); return nil },
	}
}

// Services stop in the reverse of their order, each one's run over before
// its stop, once ctx ends.
func TestServicesStopInReverse(t *testing.T) {
	t.Parallel()
	var r record
	started := make(chan string, 3)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- runServices(ctx, slog.New(slog.DiscardHandler), []service{
			waiting("a", &r, started), waiting("b", &r, started), waiting("c", &r, started),
		})
	}()
	for range 3 {
		<-started
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Every run hears ctx at once, so the "ran" may come in any order;
	// each stop follows its own run and the stops go in reverse.
	var stops []string
	for i, e := range r.get() {
		if name, ok := strings.CutSuffix(e, " stopped"); ok {
			stops = append(stops, name)
			if !slices.Contains(r.get()[:i], name+" ran") {
				t.Fatalf("events %v: %s stopped before its run returned", r.get(), name)
			}
		}
	}
	if !slices.Equal(stops, []string{"c", "b", "a"}) {
		t.Fatalf("stopped %v, want c, b, a", stops)
	}
}

// The first run that fails stops the others, in reverse, and is what
// runServices returns; a stop's error is logged, not returned.
func TestServicesFirstFailureStopsTheRest(t *testing.T) {
	t.Parallel()
	var r record
	var log testkit.Buffer
	started := make(chan string, 2)
	boom := errors.New("boom")
	release := make(chan struct{})
	failing := service{name: "b", run: func(context.Context) error { <-release; return boom }}
	last := waiting("c", &r, started)
	last.stop = func(context.Context) error { r.add("c stopped"); return errors.New("stop failed") }
	done := make(chan error, 1)
	go func() {
		done <- runServices(t.Context(), slog.New(slog.NewTextHandler(&log, nil)), []service{waiting("a", &r, started), failing, last})
	}()
	for range 2 {
		<-started
	}
	close(release)
	if err := <-done; !errors.Is(err, boom) || err.Error() != "b: boom" {
		t.Fatalf("runServices = %v, want b: boom", err)
	}
	if got, want := r.get(), []string{"c ran", "c stopped", "a ran", "a stopped"}; !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if !strings.Contains(log.String(), "stop c") || !strings.Contains(log.String(), "stop failed") {
		t.Fatalf("log %q: want the stop's error", log.String())
	}
}
