//go:build faults

package faulttest

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/notify"
)

// delivery are the notifications' timings in the workload: a 3 s delivery
// lease (a send whose worker was paused or killed goes to another after
// it) and retries from 50 ms (50 ms, 200 ms, 1 s, 6 s, …).
const delivery = "delivery=3s,backoff=50ms"

// receiver is the webhook channel's receiver: it verifies every signature
// and records every arrival by webhook-id, and it refuses one request in
// twenty with a 503, so that retries happen besides the nemesis's faults.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	secret   string
	rng      *rand.Rand
	arrivals map[string][]arrival
	bad      int // requests whose signature did not verify
}

// arrival is one request for an event and whether it was accepted.
type arrival struct {
	at       time.Time
	accepted bool
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{rng: rand.New(rand.NewPCG(3, 4)), arrivals: map[string][]arrival{}}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	ts, _ := strconv.ParseInt(req.Header.Get("webhook-timestamp"), 10, 64)
	id := req.Header.Get("webhook-id")
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil || !notify.Verify(r.secret, id, ts, body, req.Header.Get("webhook-signature")) {
		r.bad++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	accept := r.rng.IntN(20) != 0
	r.arrivals[id] = append(r.arrivals[id], arrival{at: time.Now(), accepted: accept})
	if !accept {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) setSecret(secret string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secret = secret
}

// snapshot is a copy of the arrivals and the count of bad signatures.
func (r *receiver) snapshot() (map[string][]arrival, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]arrival, len(r.arrivals))
	for id, as := range r.arrivals {
		out[id] = append([]arrival{}, as...)
	}
	return out, r.bad
}

// deliveries: once the system has converged, every queued event is
// delivered within bound; the receiver accepted each at least once, and
// more than once only as many times as faults struck while it was being
// sent (a sender killed, paused or cut off after the receiver accepted,
// before it recorded the delivery, sends again after the delivery lease);
// nothing arrived that was never queued (an event whose queuing rolled back
// with a refused write), and every signature verified. It returns how long
// the deliveries took after convergence, and their figures.
func (s *system) checkDeliveries(f findings, bound time.Duration, faults []event) (time.Duration, string) {
	began := time.Now()
	var left int
	for {
		err := s.pool.QueryRow(context.Background(), "SELECT count(*) FROM notification_events WHERE state = 'pending'").Scan(&left)
		if err == nil && left == 0 {
			break
		}
		if time.Since(began) > bound {
			if err != nil {
				f.add("checker", "count pending events: %v", err)
			} else {
				f.add("deliveries", "%d events still pending %s after convergence", left, bound)
			}
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	took := time.Since(began)
	queued := map[string]string{} // id → state
	err := s.rows("SELECT id::text, state, coalesce(last_error, '') FROM notification_events", func(r pgx.Rows) error {
		var id, state, last string
		if err := r.Scan(&id, &state, &last); err != nil {
			return err
		}
		queued[id] = state
		if state == "failed" {
			f.add("deliveries", "event %s failed: %s", id, last)
		}
		return nil
	})
	if err != nil {
		f.add("checker", "read notification_events: %v", err)
		return took, ""
	}
	if len(queued) == 0 {
		f.add("deliveries", "no event was queued: the workload sent nothing to check")
	}
	arrivals, bad := s.rcv.snapshot()
	if bad > 0 {
		f.add("deliveries", "%d requests with a signature that did not verify", bad)
	}
	for id, as := range arrivals {
		if _, ok := queued[id]; !ok {
			f.add("deliveries", "event %s arrived %d times but was never queued", id, len(as))
		}
	}
	var sends, refused, extra int
	for id, state := range queued {
		sends += len(arrivals[id])
		var accepted []time.Time
		for _, a := range arrivals[id] {
			if a.accepted {
				accepted = append(accepted, a.at)
			} else {
				refused++
			}
		}
		switch {
		case len(accepted) == 0:
			f.add("deliveries", "event %s (%s) was never accepted by the receiver", id, state)
		case len(accepted) > 1:
			extra += len(accepted) - 1
			// The extra sends must be paid for by faults during the sends.
			from, to := accepted[0].Add(-time.Second), accepted[len(accepted)-1]
			struck := 0
			for _, e := range faults {
				if !e.from.After(to) && !e.to.Before(from) {
					struck++
				}
			}
			if len(accepted)-1 > struck {
				f.add("deliveries", "event %s accepted %d times between %s and %s, with %d faults then",
					id, len(accepted), from.Format(time.StampMilli), to.Format(time.StampMilli), struck)
			}
		}
	}
	delivered := fmt.Sprintf("all delivered %s after convergence", took.Round(100*time.Millisecond))
	if left > 0 {
		delivered = fmt.Sprintf("%d still pending after %s", left, took.Round(time.Second))
	}
	return took, fmt.Sprintf("%d events queued, %d sends (%d refused by the receiver), %d accepted more than once, %s",
		len(queued), sends, refused, extra, delivered)
}
