//go:build faults

package faulttest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
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
		switch k := r.IntN(100); {
		case k < 15:
			wg.Go(func() { n.pauseHolder(r, false) })
		case k < 27:
			wg.Go(func() { n.pauseHolder(r, true) })
		case k < 37:
			wg.Go(func() { n.pause(r, i, time.Duration(300+r.IntN(5700))*time.Millisecond, "pause") })
		case k < 50:
			wg.Go(func() { n.killRestart(r, i) })
		case k < 57:
			wg.Go(func() { n.database(r, "restart") })
		case k < 62:
			wg.Go(func() { n.database(r, "crash") })
		case k < 72:
			wg.Go(func() { n.terminate() })
		default:
			wg.Go(func() { n.toxic(r, i) })
		}
	}
	wg.Wait()
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
	var epoch int64
	if err := n.s.pool.QueryRow(ctx, "SELECT epoch FROM core_update_lock WHERE name = 'check' AND expires_at > clock_timestamp()").Scan(&epoch); err != nil {
		return // no live lease, or the database is down
	}
	in := n.s.holder(epoch)
	if in == nil {
		return
	}
	n.pause(r, in.i, lease+time.Duration(500+r.IntN(2500))*time.Millisecond, fmt.Sprintf("%s epoch=%d", name, epoch))
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
		err = n.s.cl.Crash(ctx)
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
	if !n.busy[i].TryLock() {
		return
	}
	defer n.busy[i].Unlock()
	n.mu.Lock()
	n.seq++
	name := fmt.Sprintf("t%d", n.seq)
	n.mu.Unlock()
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
	spec = fmt.Sprintf(`{"name": %q, "stream": %q, %s`, name, stream, spec[1:])
	p := n.s.proxies[i]
	from := time.Now()
	if _, err := p.Toxics.AddToxicJson(strings.NewReader(spec)); err != nil {
		n.s.t.Errorf("add toxic %s: %v", spec, err)
		return
	}
	time.Sleep(time.Duration(1000+r.IntN(4000)) * time.Millisecond)
	if err := p.Toxics.RemoveToxic(context.Background(), name); err != nil {
		n.s.t.Errorf("remove toxic %s: %v", name, err)
	}
	n.record(event{action: "toxic", instance: i, from: from, to: time.Now(), note: stream + " " + spec})
}
