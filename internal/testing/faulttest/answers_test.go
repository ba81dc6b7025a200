//go:build faults

package faulttest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
)

// documented are the answers docs/design.md gives the manual check, by
// HTTP status: the check's statuses (lease_lost is answered "interrupted";
// skipped is for scheduled checks only), and 503 for cancelled or while the
// database cannot be reached (the error handler's answer).
var documented = map[int]map[string]bool{
	http.StatusOK:                  {"completed": true, "completed_with_failures": true},
	http.StatusConflict:            {"busy": true, "interrupted": true},
	http.StatusTooManyRequests:     {"cooldown": true},
	http.StatusServiceUnavailable:  {"cancelled": true, "": true},
	http.StatusInternalServerError: {"failed": true},
}

// checkAnswers: every answer is documented; an answer that names a run
// agrees with the run's record; no answer at all only while the nemesis
// had paused, killed or cut off that instance (a restarted instance does
// not listen until the database answers: its restart lasts until then).
func (s *system) checkAnswers(f findings, answers []answer, events []event) (unrecorded int) {
	disrupted := func(a answer) bool {
		for _, e := range events {
			if e.instance == a.instance && !e.from.After(a.ended) && !e.to.Before(a.began) {
				return true
			}
		}
		return false
	}
	for _, a := range answers {
		if a.code == 0 {
			if !disrupted(a) {
				f.add("documented answers", "%s on instance %d at %s: no answer (%s) while nothing disturbed it", a.kind, a.instance, a.began.Format(time.StampMilli), a.err)
			}
			continue
		}
		switch a.kind {
		case "check":
			if !documented[a.code][a.status] {
				f.add("documented answers", "check on instance %d at %s: %d %s", a.instance, a.began.Format(time.StampMilli), a.code, tail(a.body, 300))
			}
			if a.runID == 0 || (a.code != http.StatusOK && a.status != "interrupted") {
				continue
			}
			want := map[string]string{"interrupted": "lease_lost"}[a.status]
			if want == "" {
				want = a.status
			}
			// The end of a run is recorded after the answer is decided; when
			// the database is away then, the run stays "running" (shown as
			// abandoned) unless it comes back within the run's lease:
			// counted, not a violation. An interrupted check cut off from
			// the database is recorded connection_lost.
			var status string
			var epoch int64
			if err := s.pool.QueryRow(context.Background(), "SELECT status, coalesce(epoch, -1) FROM check_runs WHERE id = $1", a.runID).Scan(&status, &epoch); err != nil {
				f.add("answers agree with the history", "run %d answered %s: %v", a.runID, a.status, err)
			} else if status == "running" {
				unrecorded++
			} else if (status != want && (want != "lease_lost" || status != "connection_lost")) || (a.epoch != 0 && epoch != a.epoch) {
				f.add("answers agree with the history", "run %d answered %s (epoch %d), recorded %s (epoch %d)", a.runID, a.status, a.epoch, status, epoch)
			}
		default: // dismiss, undismiss: 303 done, 422 refused in words (no result yet), 503 database away
			if a.code != http.StatusSeeOther && a.code != http.StatusUnprocessableEntity && a.code != http.StatusServiceUnavailable {
				f.add("documented answers", "%s of FAULT-%d on instance %d at %s: %d %s", a.kind, a.advisory, a.instance, a.began.Format(time.StampMilli), a.code, tail(a.body, 300))
			}
		}
	}
	return unrecorded
}

// converge: once the nemesis has stopped and the publishers stand still, a
// check started afterwards completes within bound, the stored sequences are
// the publishers', and every instance's summary agrees with the stored
// results and dismissals. It returns how long that took.
func (s *system) converge(f findings, bound time.Duration, st *stats) {
	st.converged = s.convergeIn(f, bound)
}

func (s *system) convergeIn(f findings, bound time.Duration) time.Duration {
	ctx := context.Background()
	began := time.Now()
	var healed time.Time
	for s.pool.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&healed) != nil {
		if time.Since(began) > bound {
			f.add("converges", "the database did not answer within %s", bound)
			return 0
		}
		time.Sleep(100 * time.Millisecond)
	}
	deadline := began.Add(bound)
	for {
		var n int
		if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM check_runs WHERE status = 'completed' AND started_at > $1", healed).Scan(&n); err == nil && n > 0 {
			break
		}
		if time.Now().After(deadline) {
			f.add("converges", "no check completed within %s of the end of the faults", bound)
			return 0
		}
		time.Sleep(100 * time.Millisecond)
	}
	seqs := s.pubs.sequences()
	for j, want := range seqs {
		var got int
		if err := s.pool.QueryRow(ctx, "SELECT coalesce(sequence, 0) FROM sources WHERE url = $1", s.pubs.url(j)).Scan(&got); err != nil || got != want {
			f.add("converges", "source %d stores sequence %d (%v), the publisher's is %d", j, got, err, want)
		}
	}
	for {
		dismissed := map[int]bool{}
		err := s.rows("SELECT DISTINCT advisory_id FROM advisory_dismissals_in_force", func(r pgx.Rows) error {
			var id string
			var j int
			if err := r.Scan(&id); err != nil {
				return err
			}
			if _, err := fmt.Sscanf(id, "FAULT-%d", &j); err == nil {
				dismissed[j] = true
			}
			return nil
		})
		want := s.pubs.expected(dismissed)
		var wrong []string
		for _, in := range s.instances {
			if got, gerr := s.summary(in); gerr != nil {
				wrong = append(wrong, fmt.Sprintf("instance %d: %v", in.i, gerr))
			} else {
				for k, v := range want {
					if got[k] != v {
						wrong = append(wrong, fmt.Sprintf("instance %d: %s %d, want %d", in.i, k, got[k], v))
					}
				}
			}
		}
		if err == nil && len(wrong) == 0 {
			return time.Since(began)
		}
		if time.Now().After(deadline) {
			f.add("converges", "summaries disagree with the stored results %s after the faults: %v (%v)", bound, wrong, err)
			return 0
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// summary is instance in's GET /api/admin/plugins/updates/summary.
func (s *system) summary(in *instance) (map[string]int, error) {
	req, _ := http.NewRequest("GET", "http://"+in.addr()+"/api/admin/plugins/updates/summary", nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("summary: %d", resp.StatusCode)
	}
	var raw map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for k, v := range raw {
		if n, ok := v.(float64); ok {
			out[k] = int(n)
		}
	}
	return out, nil
}
