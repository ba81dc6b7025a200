//go:build faults

package faulttest

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

// TestCheckerCatches plants, in a database of its own, a history that
// breaks one property at a time, and requires the checker to name that
// property; the same history without the break must pass. A checker that
// cannot fail proves nothing: the control shows it for the fence, this
// test for every other property.
func TestCheckerCatches(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

	// acquire makes the next acquisition the way the lease does (the
	// trigger core_update_lock_acquired records it); held leaves the previous
	// owner's lease running, which only a broken acquire would do.
	acquire := func(s *system, d *pgtest.DB, epochs int, held bool) {
		if !held {
			d.MustExec(s.t, `UPDATE core_update_lock SET owner = NULL, expires_at = NULL WHERE name = 'check'`)
		}
		d.MustExec(s.t, `UPDATE core_update_lock SET epoch = epoch + $1, owner = gen_random_uuid(),
			acquired_at = clock_timestamp(), expires_at = clock_timestamp() + interval '1 hour' WHERE name = 'check'`, epochs)
	}
	writeSource := func(s *system, d *pgtest.DB, url string, epoch int) {
		d.MustExec(s.t, `INSERT INTO sources (url, epoch) VALUES ($1, $2) ON CONFLICT (url) DO UPDATE SET epoch = $2`, url, epoch)
	}
	run := func(s *system, d *pgtest.DB, status string, epoch any) int64 {
		var id int64
		d.QueryRow(s.t, `INSERT INTO check_runs (trigger, status, epoch, owner)
			VALUES ('manual', $1, $2::bigint, CASE WHEN $2::bigint IS NULL THEN NULL ELSE gen_random_uuid() END) RETURNING id`, status, epoch).Scan(&id)
		return id
	}
	// delivered records one event, delivered, of a webhook channel whose
	// receiver has seen nothing yet.
	delivered := func(s *system, d *pgtest.DB) {
		s.rcv = newReceiver(s.t)
		d.MustExec(s.t, `INSERT INTO notification_channels (id, name, kind, target, events, secret) VALUES (1, 'r', 'webhook', 'https://r.test/', 'security', 'whsec_x')`)
		d.MustExec(s.t, `INSERT INTO notification_events (id, channel_id, key, type, payload, state)
			VALUES ('00000000-0000-0000-0000-000000000001', 1, 'k1', 'test', '{}', 'delivered')`)
	}
	// database checks run on everything the database recorded.
	database := func(s *system, f findings) {
		s.snapshot(f, func(tx querier) { checkRuns(f, tx, checkLease(f, tx)) })
	}

	// feedSynced records a sync of the osv feed that stored a record and
	// completed, moving the cursor in its completing transaction, as
	// FeedBegin, OSVStore and FeedComplete do.
	feedSynced := func(s *system, d *pgtest.DB) {
		d.MustExec(s.t, `BEGIN;
			INSERT INTO feeds (kind, url, epoch) VALUES ('osv', 'http://127.0.0.1/osv/all.zip', 1);
			INSERT INTO feed_syncs (id, kind, trigger, status, epoch) VALUES (1, 'osv', 'cli', 'running', 1);
			COMMIT;`)
		d.MustExec(s.t, `INSERT INTO osv_records (id, hash, record, modified, keys, malicious, feed, epoch)
			VALUES ('GHSA-2222-2222-2222', '\x01', '{}', '2026-11-02T00:00:00Z', '{GHSA-2222-2222-2222}', false, 'osv', 1)`)
		d.MustExec(s.t, `BEGIN;
			UPDATE feed_syncs SET status = 'completed', finished_at = clock_timestamp() WHERE id = 1;
			UPDATE feeds SET cursor = '2026-11-02T00:00:00Z', last_success_at = clock_timestamp() WHERE kind = 'osv';
			COMMIT;`)
	}
	feeds := func(s *system, f findings) { s.snapshot(f, func(tx querier) { checkFeeds(f, tx) }) }

	// Each case plants its history, intact or broken, and runs the checks
	// that read it.
	cases := []struct {
		name, property string
		run            func(s *system, d *pgtest.DB, f findings, broken bool)
	}{
		{"two holders at once", "one holder at a time", func(s *system, d *pgtest.DB, f findings, broken bool) {
			acquire(s, d, 1, false)
			acquire(s, d, 1, broken)
			database(s, f)
		}},
		{"an epoch skipped", "epochs grow by one", func(s *system, d *pgtest.DB, f findings, broken bool) {
			acquire(s, d, 1, false)
			acquire(s, d, map[bool]int{false: 1, true: 2}[broken], false)
			database(s, f)
		}},
		{"a write after a takeover", "writes under the lease", func(s *system, d *pgtest.DB, f findings, broken bool) {
			acquire(s, d, 1, false)
			writeSource(s, d, "https://a.test/s.json", 1)
			if broken {
				acquire(s, d, 1, false)
				writeSource(s, d, "https://b.test/s.json", 1)
			}
			database(s, f)
		}},
		{"an older epoch over a newer one", "epochs only grow", func(s *system, d *pgtest.DB, f findings, broken bool) {
			acquire(s, d, 1, false)
			writeSource(s, d, "https://a.test/s.json", 1)
			acquire(s, d, 1, false)
			writeSource(s, d, "https://a.test/s.json", 2)
			if broken {
				d.MustExec(s.t, `ALTER TABLE core_update_lock DISABLE TRIGGER core_update_lock_acquired`)
				d.MustExec(s.t, `UPDATE core_update_lock SET epoch = 1 WHERE name = 'check'`)
				writeSource(s, d, "https://a.test/s.json", 1)
			}
			database(s, f)
		}},
		{"a refused run with an epoch", "refused runs write nothing", func(s *system, d *pgtest.DB, f findings, broken bool) {
			acquire(s, d, 1, false)
			run(s, d, "completed", 1)
			run(s, d, "busy", map[bool]any{false: nil, true: 1}[broken])
			database(s, f)
		}},
		{"a row of no holder", "stored rows carry a holder's epoch", func(s *system, d *pgtest.DB, f findings, broken bool) {
			acquire(s, d, 1, false)
			d.MustExec(s.t, `ALTER TABLE sources DISABLE TRIGGER fault_audit`) // planted behind the audit's back
			writeSource(s, d, "https://a.test/s.json", map[bool]int{false: 1, true: 7}[broken])
			database(s, f)
		}},
		{"two runs under one epoch", "one holder at a time", func(s *system, d *pgtest.DB, f findings, broken bool) {
			acquire(s, d, 1, false)
			run(s, d, "completed", 1)
			if broken {
				run(s, d, "lease_lost", 1)
			}
			database(s, f)
		}},
		{"an undocumented answer", "documented answers", func(s *system, d *pgtest.DB, f findings, broken bool) {
			answers := []answer{{kind: "check", code: http.StatusConflict, status: "busy", began: at(0), ended: at(10)}}
			if broken {
				answers = append(answers, answer{kind: "check", code: http.StatusInternalServerError, body: `{"error":"Something went wrong on our side."}`, began: at(20), ended: at(30)})
			}
			s.checkAnswers(f, answers, nil)
		}},
		{"no answer, nothing disturbed", "documented answers", func(s *system, d *pgtest.DB, f findings, broken bool) {
			events := []event{{action: "pause", instance: 0, from: at(0), to: at(100)}}
			a := answer{kind: "check", instance: 0, began: at(50), ended: at(60), err: "EOF"}
			if broken {
				a.instance = 1
			}
			s.checkAnswers(f, []answer{a}, events)
		}},
		{"an answer the history contradicts", "answers agree with the history", func(s *system, d *pgtest.DB, f findings, broken bool) {
			acquire(s, d, 1, false)
			id := run(s, d, map[bool]string{false: "completed", true: "lease_lost"}[broken], 1)
			s.checkAnswers(f, []answer{{kind: "check", code: http.StatusOK, status: "completed", runID: id, epoch: 1, began: at(0), ended: at(10)}}, nil)
		}},
		{"an epoch read before its acquisition", "linearizable lease", func(s *system, d *pgtest.DB, f findings, broken bool) {
			acquired := map[int64]time.Time{1: at(0), 2: at(2000)}
			read := sample{call: at(2500), ret: at(2510), epoch: 2}
			if broken {
				read = sample{call: at(1000), ret: at(1010), epoch: 2}
			}
			checkLinearizable(f, acquired, []sample{read}, nil, at(5000), time.Minute)
		}},
		{"an epoch read going down", "epochs only grow", func(s *system, d *pgtest.DB, f findings, broken bool) {
			second := map[bool]int64{false: 3, true: 1}[broken]
			checkSamples(f, []sample{{call: at(0), ret: at(1), epoch: 2}, {call: at(100), ret: at(101), epoch: second}})
		}},
		{"no check after the faults", "converges", func(s *system, d *pgtest.DB, f findings, broken bool) {
			if !broken {
				acquire(s, d, 1, false)
				d.MustExec(s.t, `INSERT INTO check_runs (trigger, status, epoch, owner, started_at) VALUES ('manual', 'completed', 1, gen_random_uuid(), clock_timestamp() + interval '1 second')`)
			}
			s.pubs = &publishers{} // no source: only "a check completes" is asked
			s.convergeIn(f, 2*time.Second)
		}},
		{"a record version stored twice", "records stored once", func(s *system, d *pgtest.DB, f findings, broken bool) {
			feedSynced(s, d)
			d.MustExec(s.t, `UPDATE osv_records SET hash = CASE WHEN $1 THEN hash ELSE '\x02' END`, broken)
			feeds(s, f)
		}},
		{"a cursor moved without a completed sync", "the cursor moves with a completed sync", func(s *system, d *pgtest.DB, f findings, broken bool) {
			feedSynced(s, d)
			if broken {
				d.MustExec(s.t, `UPDATE feeds SET cursor = '2026-11-03T00:00:00Z' WHERE kind = 'osv'`)
			}
			feeds(s, f)
		}},
		{"a sync row left running", "sync rows end once", func(s *system, d *pgtest.DB, f findings, broken bool) {
			feedSynced(s, d)
			if broken {
				d.MustExec(s.t, `INSERT INTO feed_syncs (id, kind, trigger, status, epoch) VALUES (2, 'osv', 'cli', 'running', 1)`)
			}
			feeds(s, f)
		}},
		{"a completed sync row changed again", "sync rows end once", func(s *system, d *pgtest.DB, f findings, broken bool) {
			feedSynced(s, d)
			if broken {
				d.MustExec(s.t, `UPDATE feed_syncs SET status = 'failed' WHERE id = 1`)
			}
			feeds(s, f)
		}},
		{"an interruption no sync recorded", "interruptions are recorded", func(s *system, d *pgtest.DB, f findings, broken bool) {
			feedSynced(s, d)
			d.MustExec(s.t, `INSERT INTO feed_syncs (id, kind, trigger, status, epoch) VALUES (2, 'osv', 'cli', 'running', 1)`)
			if broken { // marked interrupted by no new sync's start
				d.MustExec(s.t, `UPDATE feed_syncs SET status = 'interrupted' WHERE id = 2`)
			} else { // as FeedBegin does
				d.MustExec(s.t, `BEGIN;
					UPDATE feed_syncs SET status = 'interrupted' WHERE id = 2;
					UPDATE feeds SET interrupted_at = clock_timestamp() WHERE kind = 'osv';
					INSERT INTO feed_syncs (id, kind, trigger, status, epoch) VALUES (3, 'osv', 'cli', 'running', 1);
					COMMIT;`)
			}
			d.MustExec(s.t, `BEGIN;
				UPDATE feed_syncs SET status = 'completed' WHERE status = 'running';
				UPDATE feeds SET interrupted_at = NULL, last_success_at = clock_timestamp() WHERE kind = 'osv';
				COMMIT;`)
			feeds(s, f)
		}},
		{"pending left after the last sync", "pending cleared", func(s *system, d *pgtest.DB, f findings, broken bool) {
			feedSynced(s, d)
			if broken {
				d.MustExec(s.t, `INSERT INTO intel_pending (feed, code) VALUES ('osv', 'p0a')`)
			}
			feeds(s, f)
		}},
		{"a result older than its feed change", "results have the feeds' changes", func(s *system, d *pgtest.DB, f findings, broken bool) {
			feedSynced(s, d)
			d.MustExec(s.t, `INSERT INTO component_results (code, installed_version, epoch, core_version, document_hash, intel_version)
				VALUES ('p0a', '1.0.0', 1, '1.0.0', '\x00', 3)`)
			d.MustExec(s.t, `INSERT INTO intel_marks (code, version) VALUES ('p0a', CASE WHEN $1 THEN 5 ELSE 3 END)`, broken)
			feeds(s, f)
		}},
		{"an event delivered twice with no fault", "deliveries", func(s *system, d *pgtest.DB, f findings, broken bool) {
			delivered(s, d)
			twice := []arrival{{at: at(0), accepted: true}, {at: at(3000), accepted: true}}
			s.rcv.arrivals["00000000-0000-0000-0000-000000000001"] = twice
			faults := []event{{action: "kill-restart", instance: 0, from: at(100), to: at(900)}}
			if broken {
				faults = nil
			}
			s.checkDeliveries(f, time.Second, faults)
		}},
		{"an event never sent", "deliveries", func(s *system, d *pgtest.DB, f findings, broken bool) {
			delivered(s, d)
			if !broken {
				s.rcv.arrivals["00000000-0000-0000-0000-000000000001"] = []arrival{{at: at(0), accepted: false}, {at: at(50), accepted: true}}
			}
			s.checkDeliveries(f, time.Second, nil)
		}},
		{"an event sent that was never queued", "deliveries", func(s *system, d *pgtest.DB, f findings, broken bool) {
			delivered(s, d)
			s.rcv.arrivals["00000000-0000-0000-0000-000000000001"] = []arrival{{at: at(0), accepted: true}}
			if broken {
				s.rcv.arrivals["00000000-0000-0000-0000-000000000002"] = []arrival{{at: at(0), accepted: true}}
			}
			s.checkDeliveries(f, time.Second, nil)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, broken := range []bool{false, true} {
				d := pgtest.New(t)
				s, f := &system{t: t, pool: d.Pool}, findings{}
				s.audit()
				c.run(s, d, f, broken)
				got := f[c.property]
				switch {
				case broken && len(got) == 0:
					t.Errorf("broken: the checker did not name %q; it found %v", c.property, f)
				case !broken && len(f) > 0:
					t.Errorf("intact: the checker found %v", f)
				case broken:
					t.Logf("caught: %s: %s", c.property, strings.Join(got, "; "))
				}
			}
		})
	}
}
