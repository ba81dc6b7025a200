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
	pg   sync.Mutex   // one database fault at a time
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
		if only := os.Getenv("UPCHECK_FAULT_ACTIONS"); only != "" && !slices.Contains(strings.Split(only, ","), action) {
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
// UPCHECK_FAULT_ACTIONS=a,b keeps only those.
var actions = []struct {
	name   string
	weight int
}{
	{"pause-holder", 12}, {"pause-in-write", 10}, {"slow-holder", 12}, {"pause", 8}, {"kill-restart", 12},
	{"db-restart", 6}, {"db-crash", 5}, {"terminate", 10}, {"toxic", 25},
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

// slowHolder delays everything the holder sends to PostgreSQL by more
// than a lease (3.2-4.5 s) for 5 s: a write it sends while it still trusts
// its lease reaches the database after the lease ran out, perhaps after a
// takeover, and only the fence can refuse it.
func (n *nemesis) slowHolder(r *rand.Rand) {
	in, epoch := n.holder()
	if in == nil {
		return
	}
	// Aim at the fetch: the holder's writes come after it.
	for hits, deadline := n.s.pubs.hits.Load(), time.Now().Add(2*time.Second); n.s.pubs.hits.Load() == hits; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			return
		}
	}
	spec := fmt.Sprintf(`{"type": "latency", "attributes": {"latency": %d, "jitter": 0}}`, 3200+r.IntN(1300))
	// An operator's `upcheck check` (no cooldown) tries to take over once
	// the lease could have run out, while the writes are on their way.
	go func() {
		time.Sleep(lease)
		for range 4 {
			cmd := exec.Command(n.s.bin, "check")
			cmd.Env = n.s.direct
			if cmd.Run() == nil {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	n.addToxic(in.i, "upstream", spec, 5*time.Second, fmt.Sprintf("slow-holder epoch=%d", epoch))
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

// addToxic puts a toxic on instance i's proxy for d (unless another fault
// of that instance is on).
func (n *nemesis) addToxic(i int, stream, spec string, d time.Duration, what string) {
	if !n.busy[i].TryLock() {
		return
	}
	defer n.busy[i].Unlock()
	n.mu.Lock()
	n.seq++
	name := fmt.Sprintf("t%d", n.seq)
	n.mu.Unlock()
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
