//go:build faults

package faulttest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// event is one fault the nemesis caused: instance -1 is the database.
type event struct {
	action   string
	instance int
	from, to time.Time
	note     string
}

// nemesis causes faults at random moments, several at once, each healed
// by the goroutine that caused it.
type nemesis struct {
	s    *system
	rng  *rand.Rand
	mu   sync.Mutex
	log  []event
	pg   sync.Mutex   // one database fault (or slow holder) at a time
	busy []sync.Mutex // one fault per instance at a time
	seq  int
}

func newNemesis(s *system, seed uint64) *nemesis {
	return &nemesis{s: s, rng: rand.New(rand.NewPCG(seed, 99)), busy: make([]sync.Mutex, len(s.instances))}
}

func (n *nemesis) record(e event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.log = append(n.log, e)
}

func (n *nemesis) events() []event {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]event{}, n.log...)
}

// run causes faults until ctx ends, then waits until every fault is
// healed: every instance runs, the database is up, no toxic is left.
func (n *nemesis) run(ctx context.Context) {
	var wg sync.WaitGroup
	for sleep(ctx, time.Duration(200+n.rng.IntN(1500))*time.Millisecond) {
		r := rand.New(rand.NewPCG(n.rng.Uint64(), n.rng.Uint64()))
		i := r.IntN(len(n.s.instances))
		action := pick(r.IntN(100))
		if only := n.s.actions; only != "" && !slices.Contains(strings.Split(only, ","), action) {
			continue
		}
		switch action {
		case "pause-holder":
			wg.Go(func() { n.pauseHolder(r, false) })
		case "pause-in-write":
			wg.Go(func() { n.pauseHolder(r, true) })
		case "slow-holder":
			wg.Go(func() { n.slowHolder(r) })
		case "pause":
			wg.Go(func() { n.pause(r, i, time.Duration(300+r.IntN(5700))*time.Millisecond, "pause") })
		case "kill-restart":
			wg.Go(func() { n.killRestart(r, i) })
		case "db-restart":
			wg.Go(func() { n.database(r, "restart") })
		case "db-crash":
			wg.Go(func() { n.database(r, "crash") })
		case "terminate":
			wg.Go(func() { n.terminate() })
		default:
			wg.Go(func() { n.toxic(r, i) })
		}
	}
	wg.Wait()
}

// actions are the nemesis's faults with their weights out of 100;
// system.actions (UPCHECK_FAULT_ACTIONS=a,b) keeps only those.
var actions = []struct {
	name   string
	weight int
}{
	{"pause-holder", 12}, {"pause-in-write", 10}, {"slow-holder", 20}, {"pause", 8}, {"kill-restart", 12},
	{"db-restart", 6}, {"db-crash", 5}, {"terminate", 10}, {"toxic", 17},
}

func pick(k int) string {
	for _, a := range actions {
		if k < a.weight {
			return a.name
		}
		k -= a.weight
	}
	return "toxic"
}

// pauseHolder SIGSTOPs the instance running the current check past its
// lease, then SIGCONTs it. inWrite first waits (up to 3 s) for a backend
// holding the lease's lock, which only a lease transaction does: the
// holder is then inside a fenced write (or a renewal).
func (n *nemesis) pauseHolder(r *rand.Rand, inWrite bool) {
	ctx := context.Background()
	name := "pause-holder"
	if inWrite {
		name = "pause-in-write"
		deadline := time.Now().Add(3 * time.Second)
		for {
			var locked bool
			err := n.s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
				WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database() AND a.pid <> pg_backend_pid())`).Scan(&locked)
			if err == nil && locked {
				break
			}
			if time.Now().After(deadline) {
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	in, epoch := n.holder()
	if in == nil {
		return
	}
	n.pause(r, in.i, lease+time.Duration(500+r.IntN(2500))*time.Millisecond, fmt.Sprintf("%s epoch=%d", name, epoch))
}

// holder waits up to 3 s for a live lease and returns the instance that
// holds it.
func (n *nemesis) holder() (*instance, int64) {
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		var epoch int64
		err := n.s.pool.QueryRow(context.Background(), "SELECT epoch FROM core_update_lock WHERE name = 'check' AND expires_at > clock_timestamp()").Scan(&epoch)
		if err == nil {
			if in := n.s.holder(epoch); in != nil {
				return in, epoch
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, 0
}

// slowHolder is the stale write the fence exists for: the holder sends a
// write while it holds its lease, the write is held up on its way (by more
// than a lease: 5-6.5 s of latency on everything the holder sends), and the
// holder is paused meanwhile (a GC pause, a frozen VM), so it can neither
// notice that its lease ran out nor close its connections. The lease
// expires, an operator's `upcheck check` takes over, and then the held
// write reaches the database: only the fence can refuse it. The holder is
// resumed after its writes arrived.
func (n *nemesis) slowHolder(r *rand.Rand) {
	in, epoch := n.holder()
	if in == nil {
		return
	}
	if !n.busy[in.i].TryLock() {
		return
	}
	defer n.busy[in.i].Unlock()
	// No database fault meanwhile: a restart or a termination would close
	// the connection that carries the held write.
	if !n.pg.TryLock() {
		return
	}
	defer n.pg.Unlock()
	latency := time.Duration(5000+r.IntN(1500)) * time.Millisecond
	name := n.toxicName()
	watch := make(chan string, 1)
	key := time.Now().UnixNano()
	watches.Store(key, watch)
	defer watches.Delete(key)
	spec := fmt.Sprintf(`{"name": %q, "stream": "upstream", "type": "slow_write", "attributes": {"latency": %d, "watch": %d}}`, name, latency.Milliseconds(), key)
	p := n.s.proxies[in.i]
	// Aim at a write: the holder writes a source as soon as its document
	// has arrived, and a document with no security release is written in
	// one batch, with no event to queue (a write that queues events is a
	// transaction of several round trips, which a paused holder cannot
	// finish). The delay starts just before such a document is sent.
	var from time.Time
	var addErr error
	armed := make(chan struct{})
	arm := func() {
		from = time.Now()
		_, addErr = p.Toxics.AddToxicJson(strings.NewReader(spec))
		close(armed)
	}
	n.s.pubs.beforePlain.Store(&arm)
	select {
	case <-armed:
	case <-time.After(2 * time.Second):
		if n.s.pubs.beforePlain.CompareAndSwap(&arm, nil) {
			return // no such document: the check had written them all
		}
		<-armed
	}
	if addErr != nil {
		n.s.t.Errorf("add toxic %s: %v", spec, addErr)
		return
	}
	// Freeze the holder as soon as its write has gone into the delay (or
	// after a second without one: a pause all the same).
	var seen string
	select {
	case seen = <-watch:
	case <-time.After(time.Second):
		seen = "no write seen"
	}
	paused := in.signal(syscall.SIGSTOP)
	took := n.takeOver(epoch, from.Add(latency))
	time.Sleep(time.Until(from.Add(latency + 500*time.Millisecond))) // the held writes have arrived
	if err := p.Toxics.RemoveToxic(context.Background(), name); err != nil {
		n.s.t.Errorf("remove toxic %s: %v", name, err)
	}
	if paused {
		in.signal(syscall.SIGCONT)
	}
	n.record(event{action: "slow-holder", instance: in.i, from: from, to: time.Now(),
		note: fmt.Sprintf("epoch=%d latency=%s paused=%t, %s, %s", epoch, latency, paused, seen, took)})
}

// takeOver runs an operator's `upcheck check` (no cooldown; straight to
// the database) as soon as epoch's lease has expired or been released,
// until one acquires or until; it says what happened.
func (n *nemesis) takeOver(epoch int64, until time.Time) string {
	ctx := context.Background()
	for time.Now().Before(until) {
		var expired bool
		err := n.s.pool.QueryRow(ctx, "SELECT epoch > $1 OR coalesce(expires_at <= clock_timestamp(), true) FROM core_update_lock WHERE name = 'check'", epoch).Scan(&expired)
		if err != nil || !expired {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		cmd := exec.Command(n.s.bin, "check")
		cmd.Env = n.s.direct
		if err := cmd.Start(); err != nil {
			n.s.t.Errorf("upcheck check: %v", err)
			return "not taken over"
		}
		go cmd.Wait() // it runs its check to the end by itself
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			var taken bool
			err := n.s.pool.QueryRow(ctx, "SELECT epoch > $1 FROM core_update_lock WHERE name = 'check'", epoch).Scan(&taken)
			if err == nil && taken {
				return "taken over"
			}
		}
	}
	return "not taken over"
}

// pause SIGSTOPs instance i for d.
func (n *nemesis) pause(_ *rand.Rand, i int, d time.Duration, what string) {
	if !n.busy[i].TryLock() {
		return
	}
	defer n.busy[i].Unlock()
	in := n.s.instances[i]
	from := time.Now()
	if !in.signal(syscall.SIGSTOP) {
		return
	}
	time.Sleep(d)
	in.signal(syscall.SIGCONT)
	action, note, _ := strings.Cut(what, " ")
	n.record(event{action: action, instance: i, from: from, to: time.Now(), note: note})
}

// killRestart SIGKILLs instance i and starts it again after up to 3 s,
// on the same port.
func (n *nemesis) killRestart(r *rand.Rand, i int) {
	if !n.busy[i].TryLock() {
		return
	}
	defer n.busy[i].Unlock()
	in := n.s.instances[i]
	from := time.Now()
	in.kill()
	time.Sleep(time.Duration(r.IntN(3000)) * time.Millisecond)
	in.start(n.s.t)
	// Down until it listens again (serve listens before it needs the
	// database).
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", in.addr(), 100*time.Millisecond); err == nil {
			c.Close()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	n.record(event{action: "kill-restart", instance: i, from: from, to: time.Now()})
}

// database stops PostgreSQL (fast shutdown, or a crash: SIGKILL to every
// process of it) and starts it again after up to 2 s.
func (n *nemesis) database(r *rand.Rand, how string) {
	if !n.pg.TryLock() {
		return
	}
	defer n.pg.Unlock()
	ctx := context.Background()
	from := time.Now()
	var err error
	if how == "crash" {
		err = n.crash(ctx)
	} else {
		err = n.s.cl.Stop(ctx)
	}
	note := ""
	if err != nil {
		note = err.Error()
	}
	time.Sleep(time.Duration(200+r.IntN(1800)) * time.Millisecond)
	for attempt := 0; ; attempt++ {
		if err := n.s.cl.Start(ctx); err == nil || attempt == 20 {
			if err != nil {
				n.s.t.Errorf("database did not start again: %v", err)
			}
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	n.record(event{action: "db-" + how, instance: -1, from: from, to: time.Now(), note: note})
}

// crash SIGKILLs every process of the cluster and waits for the
// postmaster's end. Here the killed postmaster stays a zombie until PID 1
// reaps it, which pg_ctl takes for a running server (devdb's Start would
// then start nothing): its pid file is removed once it is a zombie.
func (n *nemesis) crash(ctx context.Context) error {
	pidFile := filepath.Join(n.s.cl.Dir, "data", "postmaster.pid")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return err
	}
	pid, _, _ := strings.Cut(string(b), "\n")
	if err := n.s.cl.Crash(ctx); err != nil {
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		stat, err := os.ReadFile("/proc/" + strings.TrimSpace(pid) + "/stat")
		if err != nil { // reaped
			return nil
		}
		if _, rest, _ := strings.Cut(string(stat), ") "); strings.HasPrefix(rest, "Z") {
			return os.Remove(pidFile)
		}
	}
	return fmt.Errorf("postmaster %s still running 10 s after SIGKILL", pid)
}

// terminate ends every backend of the workload's database but its own.
func (n *nemesis) terminate() {
	if !n.pg.TryLock() {
		return
	}
	defer n.pg.Unlock()
	from := time.Now()
	var ended int
	err := n.s.pool.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))
		FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&ended)
	if err != nil {
		return
	}
	n.record(event{action: "terminate", instance: -1, from: from, to: time.Now(), note: fmt.Sprintf("%d backends", ended)})
}

// toxic disturbs instance i's connections to PostgreSQL for 1-5 s:
// latency (up to 4 s, past the lease), a timeout (data stops, then the
// connection closes), or connection resets.
func (n *nemesis) toxic(r *rand.Rand, i int) {
	stream := []string{"upstream", "downstream"}[r.IntN(2)]
	var spec string
	switch r.IntN(3) {
	case 0:
		spec = fmt.Sprintf(`{"type": "latency", "attributes": {"latency": %d, "jitter": %d}}`, 100+r.IntN(3900), r.IntN(300))
	case 1:
		spec = fmt.Sprintf(`{"type": "timeout", "attributes": {"timeout": %d}}`, r.IntN(4000))
	default:
		spec = fmt.Sprintf(`{"type": "reset_peer", "attributes": {"timeout": %d}}`, r.IntN(500))
	}
	n.addToxic(i, stream, spec, time.Duration(1000+r.IntN(4000))*time.Millisecond, "toxic")
}

// toxicName is a fresh name for a toxic.
func (n *nemesis) toxicName() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seq++
	return fmt.Sprintf("t%d", n.seq)
}

// addToxic puts a toxic on instance i's proxy for d (unless another fault
// of that instance is on).
func (n *nemesis) addToxic(i int, stream, spec string, d time.Duration, what string) {
	if !n.busy[i].TryLock() {
		return
	}
	defer n.busy[i].Unlock()
	name := n.toxicName()
	spec = fmt.Sprintf(`{"name": %q, "stream": %q, %s`, name, stream, spec[1:])
	p := n.s.proxies[i]
	from := time.Now()
	if _, err := p.Toxics.AddToxicJson(strings.NewReader(spec)); err != nil {
		n.s.t.Errorf("add toxic %s: %v", spec, err)
		return
	}
	time.Sleep(d)
	if err := p.Toxics.RemoveToxic(context.Background(), name); err != nil {
		n.s.t.Errorf("remove toxic %s: %v", name, err)
	}
	action, note, _ := strings.Cut(what, " ")
	n.record(event{action: action, instance: i, from: from, to: time.Now(), note: strings.TrimSpace(note + " " + stream + " " + spec)})
}
