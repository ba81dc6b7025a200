package main

import (
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/upcheck/upcheck/internal/dev/npmreg"
)

// registry is the npm part's registry: the one fake registry
// (internal/dev/npmreg) serving its sized documents on loopback, each
// answer after the same latency as the document publishers, its signing
// keys at /-/npm/v1/keys. It counts the body bytes it sent (SentBytes) and
// its answers; with Plain set it sends every document uncompressed
// whatever the client accepts.
type registry struct {
	*npmreg.Registry
	srv  *http.Server
	url  string
	docs []*npmreg.Sized
}

// startRegistry generates the first n documents (npmreg.SizedPackages for the
// bench), signed with a key of the run's own, and starts serving them.
func startRegistry(n int) (*registry, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	reg, err := npmreg.New("/")
	if err != nil {
		ln.Close()
		return nil, err
	}
	reg.SetLatency(latency)
	r := &registry{Registry: reg, url: "http://" + ln.Addr().String()}
	key := reg.SigningKey()
	r.docs = make([]*npmreg.Sized, n)
	// Two generators: the machine has two cores, and the 40 MB document
	// alone takes a while.
	var wg sync.WaitGroup
	var next atomic.Int64
	var genErr error
	var mu sync.Mutex
	for range 2 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				d, err := npmreg.GenerateSized(i, key, r.url)
				if err != nil {
					mu.Lock()
					genErr = err
					mu.Unlock()
					return
				}
				r.docs[i] = d
			}
		})
	}
	wg.Wait()
	if genErr != nil {
		ln.Close()
		return nil, genErr
	}
	reg.AddSized(r.docs...)
	// The packages the documents depend on, served: an update that adds
	// one makes the check read its document (docs/npm.md "What an update
	// brings").
	for i := range npmreg.SizedDependencies {
		d, err := npmreg.GenerateDependency(i)
		if err != nil {
			ln.Close()
			return nil, err
		}
		reg.AddSized(d)
	}
	// Generating left hundreds of megabytes of garbage: give them back
	// before the checks run beside the bench.
	debug.FreeOSMemory()
	r.srv = &http.Server{Handler: reg, ReadHeaderTimeout: 5 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

func (r *registry) close() { r.srv.Close() }

// manifest lists every package as a component with source npm:NAME at its
// installed version; the core's package is the core.
func (r *registry) manifest() []byte {
	var comps []string
	for i, d := range r.docs {
		code := fmt.Sprintf("npm-%03d", i)
		if d.Name == npmreg.SizedCore {
			code = "core"
		}
		comps = append(comps, fmt.Sprintf(`{"code": %q, "name": %q, "version": %q, "source": "npm:%s"}`, code, d.Name, d.Installed, d.Name))
	}
	return []byte(`{"components": [` + strings.Join(comps, ",\n") + `]}`)
}
