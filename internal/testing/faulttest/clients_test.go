//go:build faults

package faulttest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// answer is what one client saw for one request.
type answer struct {
	kind     string // "check", "dismiss", "undismiss"
	instance int
	advisory int // dismiss, undismiss: the source whose advisory
	began    time.Time
	ended    time.Time
	code     int    // 0: no HTTP answer
	status   string // the JSON status of a check's answer
	runID    int64
	epoch    int64
	err      string // the transport error, when there was no answer
	body     string
}

// recorder keeps every answer, safe for the clients to share.
type recorder struct {
	mu      sync.Mutex
	answers []answer
}

func (r *recorder) add(a answer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers = append(r.answers, a)
}

func (r *recorder) all() []answer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]answer{}, r.answers...)
}

// httpClient gives up on an answer after 20 s (an instance may be paused).
var httpClient = &http.Client{
	Timeout: 20 * time.Second,
	// A dismissal answers 303: the answer is the redirect, not the page.
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// post sends an authenticated POST to instance in and records the answer.
func (s *system) post(rec *recorder, a answer, path string, form url.Values) {
	a.began = time.Now()
	req, _ := http.NewRequest("POST", "http://"+s.instances[a.instance].addr()+path, strings.NewReader(form.Encode()))
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := httpClient.Do(req)
	a.ended = time.Now()
	if err != nil {
		a.err = err.Error()
		rec.add(a)
		return
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	a.code, a.body = resp.StatusCode, string(b)
	if a.kind == "check" {
		var v struct {
			Status string `json:"status"`
			RunID  int64  `json:"run_id"`
			Epoch  int64  `json:"epoch"`
		}
		if json.Unmarshal(b, &v) == nil {
			a.status, a.runID, a.epoch = v.Status, v.RunID, v.Epoch
		}
	}
	rec.add(a)
}

// clients run until ctx ends: n pressers of the manual check and one
// dismisser, each at a random instance after a random pause.
func (s *system) clients(ctx context.Context, rng *rand.Rand, n int, rec *recorder) *sync.WaitGroup {
	var wg sync.WaitGroup
	for c := range n + 1 {
		r := rand.New(rand.NewPCG(rng.Uint64(), uint64(c)))
		wg.Go(func() {
			for ctx.Err() == nil {
				sleep(ctx, time.Duration(200+r.IntN(1300))*time.Millisecond)
				a := answer{instance: r.IntN(len(s.instances))}
				if c < n {
					a.kind = "check"
					s.post(rec, a, "/api/admin/plugins/updates/check", nil)
					continue
				}
				a.advisory = r.IntN(len(s.pubs.seq))
				path := fmt.Sprintf("/admin/plugins/p%db/advisories/FAULT-%d/", a.advisory, a.advisory)
				if r.IntN(2) == 0 {
					a.kind = "dismiss"
					s.post(rec, a, path+"dismiss", url.Values{"reason": {"fault workload"}})
				} else {
					a.kind = "undismiss"
					s.post(rec, a, path+"undismiss", nil)
				}
			}
		})
	}
	return &wg
}

// mutate bumps a random source's sequence every second or two until ctx
// ends.
func (s *system) mutate(ctx context.Context, rng *rand.Rand) *sync.WaitGroup {
	var wg sync.WaitGroup
	r := rand.New(rand.NewPCG(rng.Uint64(), 7))
	wg.Go(func() {
		for sleep(ctx, time.Duration(500+r.IntN(1500))*time.Millisecond) {
			s.pubs.bump(r.IntN(len(s.pubs.seq)))
		}
	})
	return &wg
}

// sample is one read of the lease's epoch and when it was asked and
// answered.
type sample struct {
	call, ret time.Time
	epoch     int64
}

// sample reads the lease's epoch every 100 ms (directly, not through a
// proxy) until ctx ends; the checker wants it never to go down.
func (s *system) sample(ctx context.Context, into *[]sample) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Go(func() {
		for sleep(ctx, 100*time.Millisecond) {
			v := sample{call: time.Now()}
			qctx, cancel := context.WithTimeout(ctx, time.Second)
			err := s.pool.QueryRow(qctx, "SELECT epoch FROM core_update_lock WHERE name = 'check'").Scan(&v.epoch)
			cancel()
			v.ret = time.Now()
			if err == nil {
				*into = append(*into, v)
			}
		}
	})
	return &wg
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
