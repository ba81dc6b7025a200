//go:build faults

package faulttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/testing/feedserver"
	"github.com/upcheck/upcheck/internal/testing/testkit"
)

// feeder is the workload's advisory feed: an OSV archive on a feed server
// (every instance's UPCHECK_FEEDS) with one record for each component's
// package, of versions no component has installed (so the summaries the
// checker expects stay as they are, while every change still marks the
// component pending and makes its result be written again), and unrelated
// records around them. Between the clients' operations it changes some of
// the package records (each change new bytes and a newer modified time, so
// the cursor moves) and runs `upcheck feed sync` through a random
// instance's proxy, killing it now and then midway.
type feeder struct {
	srv      *feedserver.Server
	packages []string
	mu       sync.Mutex
	versions []int // the content version of each package's record
	gen      int
	outcomes map[string]int
}

// feedUnrelated is how many records name no component's package.
const feedUnrelated = 300

// newFeeder serves the first version of every record.
func newFeeder(t *testing.T, packages []string) *feeder {
	fd := &feeder{srv: feedserver.New(t), packages: packages, versions: make([]int, len(packages)), outcomes: map[string]int{}}
	fd.publish()
	return fd
}

// setting is the instances' UPCHECK_FEEDS.
func (fd *feeder) setting() string { return "osv=" + fd.srv.ArchiveURL() }

func feedRecordID(k int) string { return fmt.Sprintf("GHSA-2222-2222-%04d", 2222+k) }

var feedModifiedRE = regexp.MustCompile(`"modified": "[^"]*"`)

// record is package k's record at version v: not affecting 1.0.x, its
// summary and modified time saying the version.
func (fd *feeder) record(k, v int) []byte {
	rec := osvgen.Record(feedRecordID(k), fd.packages[k], osvgen.KindVuln, "5.0.0", "6.0.0")
	at := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC).Add(time.Duration(v) * time.Second)
	rec = feedModifiedRE.ReplaceAll(rec, []byte(`"modified": "`+at.Format(time.RFC3339)+`"`))
	return bytes.Replace(rec, []byte(`"summary": "`), fmt.Appendf(nil, `"summary": "version %d: `, v), 1)
}

// publish serves the current versions. Called with fd.mu held or before
// the workload starts.
func (fd *feeder) publish() {
	versions := slices.Clone(fd.versions)
	fd.srv.SetRecords(func(yield func(string, []byte) bool) {
		for k, v := range versions {
			if !yield(feedRecordID(k), fd.record(k, v)) {
				return
			}
		}
		for id, rec := range osvgen.Records(osvgen.Spec{N: feedUnrelated, Seed: 5, MalShare: 0.1}) {
			if !yield(id, rec) {
				return
			}
		}
	})
}

// change gives one to three package records a new version, and reads the
// archive (modified_id.csv off) or the delta (on) at random.
func (fd *feeder) change(r *rand.Rand) {
	fd.mu.Lock()
	defer fd.mu.Unlock()
	for range 1 + r.IntN(3) {
		fd.gen++
		fd.versions[r.IntN(len(fd.versions))] = fd.gen
	}
	fd.srv.ModifiedCSV(r.IntN(2) == 0)
	fd.publish()
}

func (fd *feeder) outcome(o string) {
	fd.mu.Lock()
	defer fd.mu.Unlock()
	fd.outcomes[o]++
}

// run changes the records and syncs until ctx ends, every second or three.
func (s *system) feedSyncs(ctx context.Context, rng *rand.Rand) *sync.WaitGroup {
	var wg sync.WaitGroup
	r := rand.New(rand.NewPCG(rng.Uint64(), 24))
	wg.Go(func() {
		for sleep(ctx, time.Duration(1000+r.IntN(2000))*time.Millisecond) {
			if r.IntN(3) > 0 {
				s.feeds.change(r)
			}
			in := s.instances[r.IntN(len(s.instances))]
			var killAfter time.Duration
			if r.IntN(3) == 0 {
				killAfter = time.Duration(r.IntN(80)) * time.Millisecond
			}
			s.feeds.outcome(s.feedSync(in.env, killAfter))
		}
	})
	return &wg
}

// feedSync runs `upcheck feed sync` with env and says how it ended. With
// killAfter set, it is SIGKILLed that long after the feed server saw its
// first request (the sync has begun: its row says running), or after 10 s
// if it never asks; without, after 30 s.
func (s *system) feedSync(env []string, killAfter time.Duration) string {
	cmd := exec.Command(s.bin, "feed", "sync")
	cmd.Env = env
	var out testkit.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	asked := func() int {
		return s.feeds.srv.Requests(feedserver.ArchivePath) + s.feeds.srv.Requests(feedserver.ModifiedPath)
	}
	before := asked()
	if err := cmd.Start(); err != nil {
		return "not started"
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	kill := time.After(30 * time.Second)
	if killAfter > 0 {
		kill = time.After(10 * time.Second)
	}
	for ended := false; !ended; {
		select {
		case <-done:
			ended = true
		case <-kill:
			cmd.Process.Kill()
			<-done
			if killAfter > 0 {
				return "killed before it asked"
			}
			return "timed out"
		case <-time.After(5 * time.Millisecond):
			if killAfter > 0 && asked() > before {
				time.Sleep(killAfter)
				cmd.Process.Kill()
				<-done
				if cmd.ProcessState.ExitCode() == 0 {
					return "exit 0 before the kill"
				}
				return "killed midway"
			}
		}
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		text := strings.TrimSpace(out.String())
		return fmt.Sprintf("exit %d: %s", code, tail(text[strings.LastIndex(text, "\n")+1:], 70))
	}
	var res struct{ Status string }
	text := strings.TrimSpace(out.String())
	if err := json.Unmarshal([]byte(text[strings.LastIndex(text, "\n")+1:]), &res); err != nil {
		return "exit 0, unreadable"
	}
	return "exit 0 " + res.Status
}

// settleFeeds runs, once the faults are over, `upcheck feed sync` until one
// completes (a check may hold the lease), within bound.
func (s *system) settleFeeds(f findings, bound time.Duration) {
	deadline := time.Now().Add(bound)
	for {
		o := s.feedSync(s.direct, 0)
		s.feeds.outcome("final: " + o)
		if o == "exit 0 completed" || o == "exit 0 not_modified" {
			return
		}
		if time.Now().After(deadline) {
			f.add("feed syncs", "no feed sync completed within %s of the end of the faults (last: %s)", bound, o)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// auditFeeds records, at each commit, what the checker reads of the feed
// syncs: every stored version of a record (its id and hash), every move of
// a feed's cursor, validators or last success, and every sync row written
// or changed, each with its transaction. Test instrumentation, like audit.
func (s *system) auditFeeds() {
	s.exec(`
CREATE TABLE fault_osv_writes (id text NOT NULL, hash bytea NOT NULL, txid bigint NOT NULL);
CREATE TABLE fault_feed_moves (kind text NOT NULL, txid bigint NOT NULL, moved boolean NOT NULL, cursor text,
                               last_success_at timestamptz, interrupted_at timestamptz);
CREATE TABLE fault_sync_changes (sync_id bigint NOT NULL, kind text NOT NULL, txid bigint NOT NULL, old_status text, new_status text NOT NULL);
CREATE FUNCTION fault_audit_feeds() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'osv_records' THEN
        INSERT INTO fault_osv_writes VALUES (NEW.id, NEW.hash, txid_current());
    ELSIF TG_TABLE_NAME = 'feeds' THEN
        INSERT INTO fault_feed_moves VALUES (NEW.kind, txid_current(),
            CASE WHEN TG_OP = 'INSERT' THEN NEW.cursor IS NOT NULL OR NEW.etag IS NOT NULL OR NEW.last_success_at IS NOT NULL
                 ELSE (NEW.cursor, NEW.etag, NEW.last_success_at) IS DISTINCT FROM (OLD.cursor, OLD.etag, OLD.last_success_at) END,
            NEW.cursor, NEW.last_success_at, NEW.interrupted_at);
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO fault_sync_changes VALUES (NEW.id, NEW.kind, txid_current(), NULL, NEW.status);
    ELSIF NEW.status IS DISTINCT FROM OLD.status THEN
        INSERT INTO fault_sync_changes VALUES (NEW.id, NEW.kind, txid_current(), OLD.status, NEW.status);
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER fault_audit_feeds AFTER INSERT OR UPDATE ON osv_records FOR EACH ROW EXECUTE FUNCTION fault_audit_feeds();
CREATE TRIGGER fault_audit_feeds AFTER INSERT OR UPDATE ON feeds FOR EACH ROW EXECUTE FUNCTION fault_audit_feeds();
CREATE TRIGGER fault_audit_feeds AFTER INSERT OR UPDATE ON feed_syncs FOR EACH ROW EXECUTE FUNCTION fault_audit_feeds();
-- The fence's audit covers the feeds' fenced writes too. (A sync row is
-- audited when written: the next holder marks an interrupted one without
-- taking it as its own.)
CREATE CONSTRAINT TRIGGER fault_audit AFTER INSERT OR UPDATE ON osv_records
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fault_audit('id');
CREATE CONSTRAINT TRIGGER fault_audit AFTER INSERT OR UPDATE ON feeds
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fault_audit('kind');
CREATE CONSTRAINT TRIGGER fault_audit AFTER INSERT ON feed_syncs
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fault_audit('id');`)
}

// checkFeeds, once a last sync completed: no version of a record was
// stored twice; a feed's cursor, validators and last success moved only
// in the transaction of a completed sync; a sync row went from running to
// one final status, once, and an interrupted one was recorded so by the
// next sync's start, which set the feed's interruption; no row is left
// running; nothing is pending and the interruption is cleared; and every
// component a feed change marked has a result evaluated with that change.
func checkFeeds(f findings, tx querier) {
	each := func(property, sql string, format func(r pgx.Rows) (string, error)) {
		err := queryRows(tx, sql, func(r pgx.Rows) error {
			s, err := format(r)
			if err == nil {
				f.add(property, "%s", s)
			}
			return err
		})
		if err != nil {
			f.add("checker", "%s: %v", sql, err)
		}
	}
	text := func(r pgx.Rows) (string, error) {
		var s string
		err := r.Scan(&s)
		return s, err
	}
	each("records stored once", `SELECT format('%s with hash %s stored %s times', id, encode(hash, 'hex'), count(*))
		FROM fault_osv_writes GROUP BY id, hash HAVING count(*) > 1`, text)
	each("the cursor moves with a completed sync", `SELECT format('%s: cursor %s, last success %s moved in transaction %s, which completed no sync',
			m.kind, coalesce(m.cursor, 'null'), coalesce(m.last_success_at::text, 'null'), m.txid)
		FROM fault_feed_moves m
		WHERE m.moved
		  AND NOT EXISTS (SELECT 1 FROM fault_sync_changes c WHERE c.txid = m.txid AND c.kind = m.kind AND c.new_status IN ('completed', 'not_modified'))`, text)
	each("sync rows end once", `SELECT format('sync %s went from %s to %s', sync_id, coalesce(old_status, 'nothing'), new_status)
		FROM fault_sync_changes
		WHERE (old_status IS NULL AND new_status <> 'running')
		   OR (old_status IS NOT NULL AND (old_status <> 'running' OR new_status NOT IN ('completed', 'not_modified', 'failed', 'interrupted')))`, text)
	each("sync rows end once", `SELECT format('sync %s (%s) is still running after the last sync', id, kind) FROM feed_syncs WHERE status = 'running'`, text)
	each("interruptions are recorded", `SELECT format('sync %s was marked interrupted in transaction %s, which started no sync or set no interruption', c.sync_id, c.txid)
		FROM fault_sync_changes c
		WHERE c.new_status = 'interrupted'
		  AND (NOT EXISTS (SELECT 1 FROM fault_sync_changes n WHERE n.txid = c.txid AND n.kind = c.kind AND n.old_status IS NULL AND n.sync_id > c.sync_id)
		    OR NOT EXISTS (SELECT 1 FROM fault_feed_moves m WHERE m.txid = c.txid AND m.kind = c.kind AND m.interrupted_at IS NOT NULL))`, text)
	each("pending cleared", `SELECT format('%s still pending for %s after the last completed sync', code, feed) FROM intel_pending`, text)
	each("pending cleared", `SELECT format('feed %s still says interrupted (%s) or failing (%s) after its last sync completed', kind, interrupted_at, last_error)
		FROM feeds WHERE interrupted_at IS NOT NULL OR last_error IS NOT NULL`, text)
	each("results have the feeds' changes", `SELECT format('%s: result evaluated with the feeds at version %s, changed for it at %s', m.code, r.intel_version, m.version)
		FROM intel_marks m JOIN component_results r ON r.code = m.code
		WHERE r.intel_version < m.version`, text)
}

// feedCounts are the figures of the run's feed syncs for the log.
func (s *system) feedCounts(f findings, st *stats) {
	s.feeds.mu.Lock()
	outcomes := maps.Clone(s.feeds.outcomes)
	s.feeds.mu.Unlock()
	st.counts["feed syncs"] = sorted(outcomes)
	st.counts["feed history"] = s.joined(f, "SELECT status || ' ×' || count(*) FROM feed_syncs GROUP BY status ORDER BY status", ", ")
	st.counts["feed records"] = s.joined(f, `SELECT format('%s versions of %s records stored; %s moves of the cursor',
		(SELECT count(*) FROM fault_osv_writes), (SELECT count(*) FROM osv_records), (SELECT count(*) FROM fault_feed_moves WHERE moved))`, "")
}
