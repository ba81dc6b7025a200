//go:build faults

package faulttest

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/testing/publisher"
)

// publishers serve n sources, each for two components (and the first for
// the core, always up to date): pNa, whose newest
// release 1.0.SEQ is a security release when the sequence is even, and
// pNb, whose newest release 1.0.SEQ is not, and which an advisory FAULT-N
// with no fix affects (the clients dismiss and undismiss it). A source's
// sequence grows as the run goes (bump); each answer waits a moment, so
// checks spend time fetching and the nemesis finds them there. They answer
// on the shared test publisher (internal/testing/publisher), through its
// fallback: what they serve is made at each request.
type publishers struct {
	URL  string
	mu   sync.Mutex
	seq  []int
	rng  *rand.Rand
	slow time.Duration // the longest wait before an answer
	// beforePlain, when set, is called (once) just before a document with
	// an odd sequence is sent: it names no security release, so its write
	// queues no event and goes as one pipelined batch, the write a slow
	// holder can get through late.
	beforePlain atomic.Pointer[func()]
}

func newPublishers(t *testing.T, n int) *publishers {
	p := &publishers{seq: make([]int, n), rng: rand.New(rand.NewPCG(1, 2)), slow: 400 * time.Millisecond}
	for i := range p.seq {
		p.seq[i] = 1
	}
	p.URL = publisher.New(t, publisher.Fallback(http.HandlerFunc(p.serve))).URL
	return p
}

func (p *publishers) serve(w http.ResponseWriter, r *http.Request) {
	var j int
	if _, err := fmt.Sscanf(r.URL.Path, "/s%d.json", &j); err != nil || j < 0 || j >= len(p.seq) {
		http.NotFound(w, r)
		return
	}
	p.mu.Lock()
	seq := p.seq[j]
	body := p.document(j, seq) // what the publisher had when the request came
	wait := time.Duration(p.rng.Int64N(int64(p.slow) + 1))
	p.mu.Unlock()
	select {
	case <-time.After(wait):
	case <-r.Context().Done():
		return
	}
	if seq%2 == 1 {
		if f := p.beforePlain.Swap(nil); f != nil {
			(*f)()
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

func (p *publishers) document(j, seq int) []byte {
	core := ""
	if j == 0 {
		core = `"core": {"releases": [{"version": "1.0.0"}]},`
	}
	return fmt.Appendf(nil, `{"format": 1, "publisher": "faults", "sequence": %[2]d, "packages": {%[4]s
		"p%[1]da": {"releases": [{"version": "1.0.%[2]d", "security": %[3]t}]},
		"p%[1]db": {"releases": [{"version": "1.0.%[2]d"}],
		            "advisories": [{"id": "FAULT-%[1]d", "severity": "high", "affected": "<9.0.0", "summary": "fault %[1]d"}]}}}`,
		j, seq, seq%2 == 0, core)
}

// bump raises source j's sequence by one.
func (p *publishers) bump(j int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq[j]++
}

// sequences are the current sequences.
func (p *publishers) sequences() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int{}, p.seq...)
}

func (p *publishers) url(j int) string { return fmt.Sprintf("%s/s%d.json", p.URL, j) }

// packages are the npm packages the components are (their manifest's
// "package"), which the feed's records name.
func (p *publishers) packages() []string {
	var out []string
	for j := range p.seq {
		for _, c := range []string{"a", "b"} {
			out = append(out, fmt.Sprintf("fault-p%d%s", j, c))
		}
	}
	return out
}

// manifest writes the manifest of every source's two components, each
// naming its npm package.
func (p *publishers) manifest(t *testing.T) string {
	comps := []string{fmt.Sprintf(`{"code": "core", "name": "Core", "version": "1.0.0", "source": %q}`, p.url(0))}
	for j := range p.seq {
		for _, c := range []string{"a", "b"} {
			comps = append(comps, fmt.Sprintf(`{"code": "p%d%s", "name": "P%d%s", "version": "1.0.0", "source": %q, "package": "fault-p%d%s"}`,
				j, c, j, c, p.url(j), j, c))
		}
	}
	path := filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(path, []byte(`{"components": [`+strings.Join(comps, ",")+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// expected is what the summary must say once every source's stored
// document is the publisher's current one, given the dismissed advisories:
// every component has an update; pNa's is a security update when its
// source's sequence is even; every pNb is vulnerable unless FAULT-N is
// dismissed.
func (p *publishers) expected(dismissed map[int]bool) map[string]int {
	seq := p.sequences()
	want := map[string]int{"components": 2*len(seq) + 1, "updates_available": 2 * len(seq)}
	for j, s := range seq {
		if s%2 == 0 {
			want["security_updates"]++
		}
		if !dismissed[j] {
			want["vulnerable"]++
		}
	}
	return want
}
