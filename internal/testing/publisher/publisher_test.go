package publisher_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/wait"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// got is one answer as a client saw it.
type got struct {
	status          int
	body, sig, etag string
	contentType     string
}

func get(t *testing.T, url string, header ...string) got {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return got{resp.StatusCode, string(b), resp.Header.Get("Upcheck-Signature"), resp.Header.Get("ETag"), resp.Header.Get("Content-Type")}
}

const document = `{"format": 1, "publisher": "acme", "sequence": 1, "packages": {"core": {"releases": [{"version": "1.0.0"}]}}}`

// A path serves what was published there: a document, unsigned or with its
// signature (which verifies under Key), a failing status; nothing else
// answers 404.
func TestServesWhatWasPublished(t *testing.T) {
	t.Parallel()
	p := publisher.New(t)
	p.Set("/plain.json", []byte(document))
	p.SetSigned("/signed.json", []byte(document), p.Sign([]byte(document)))
	p.Fail("/down.json", http.StatusBadGateway)

	if g := get(t, p.URL+"/plain.json"); g.status != 200 || g.body != document || g.sig != "" || g.contentType != "application/json" {
		t.Errorf("plain document: %+v", g)
	}
	g := get(t, p.URL+"/signed.json")
	if g.status != 200 || g.body != document {
		t.Errorf("signed document: %+v", g)
	}
	if err := updatedoc.Verify([]byte(g.body), g.sig, p.Key()); err != nil {
		t.Errorf("the signature does not verify under Key: %v", err)
	}
	if g := get(t, p.URL+"/down.json"); g.status != http.StatusBadGateway {
		t.Errorf("failing path: %+v", g)
	}
	if g := get(t, p.URL+"/nothing.json"); g.status != http.StatusNotFound {
		t.Errorf("unpublished path: %+v", g)
	}
	// A later Set replaces the answer, signature and failure included.
	p.Set("/signed.json", []byte(`{"format": 1}`))
	p.Set("/down.json", []byte(document))
	if g := get(t, p.URL+"/signed.json"); g.body != `{"format": 1}` || g.sig != "" {
		t.Errorf("replaced document: %+v", g)
	}
	if g := get(t, p.URL+"/down.json"); g.status != 200 {
		t.Errorf("a failing path published again: %+v", g)
	}
	p.Remove("/plain.json")
	if g := get(t, p.URL+"/plain.json"); g.status != http.StatusNotFound {
		t.Errorf("removed path: %+v", g)
	}
	if n := p.Requests("/down.json"); n != 2 {
		t.Errorf("Requests(/down.json) = %d, want 2", n)
	}
}

// With ETags a document answers its own tag with 304, and a changed
// document gets a new tag and its body; NotModifiedToAny answers 304 to
// any tag.
func TestETags(t *testing.T) {
	t.Parallel()
	p := publisher.New(t, publisher.WithETags())
	p.Set("/feed.json", []byte(document))
	first := get(t, p.URL+"/feed.json")
	if first.status != 200 || first.etag == "" {
		t.Fatalf("first answer: %+v", first)
	}
	if g := get(t, p.URL+"/feed.json", "If-None-Match", first.etag); g.status != http.StatusNotModified || g.body != "" {
		t.Errorf("same tag: %+v, want 304", g)
	}
	p.Set("/feed.json", []byte(strings.Replace(document, `"sequence": 1`, `"sequence": 2`, 1)))
	if g := get(t, p.URL+"/feed.json", "If-None-Match", first.etag); g.status != 200 || g.etag == first.etag || !strings.Contains(g.body, `"sequence": 2`) {
		t.Errorf("changed document: %+v, want 200 with a new tag", g)
	}
	if plain := publisher.New(t); get(t, plainURL(plain), "If-None-Match", first.etag).etag != "" {
		t.Error("a publisher without ETags sent one")
	}
	// A publisher that answers 304 to any tag, the one it never sent too.
	liar := publisher.New(t, publisher.WithETags(), publisher.NotModifiedToAny())
	if g := get(t, plainURL(liar), "If-None-Match", `"never sent"`); g.status != http.StatusNotModified {
		t.Errorf("NotModifiedToAny: %+v, want 304", g)
	}
	if g := get(t, liar.URL+"/feed.json"); g.status != 200 || g.body != document {
		t.Errorf("NotModifiedToAny without a tag: %+v, want the document", g)
	}
}

func plainURL(p *publisher.Publisher) string {
	p.Set("/feed.json", []byte(document))
	return p.URL + "/feed.json"
}

// A held path keeps its requests waiting until Release; the answer is what
// the path held when the request arrived. After Stop, new requests pass
// while those held still wait.
func TestHold(t *testing.T) {
	t.Parallel()
	p := publisher.New(t)
	p.Set("/slow.json", []byte(`"first"`))
	hold := p.Hold("/slow.json")
	answered := make(chan got, 2)
	go func() { answered <- getNoFatal(p.URL + "/slow.json") }()
	p.AwaitRequests(t, "/slow.json", 1, wait.Guard)
	p.Set("/slow.json", []byte(`"second"`))

	hold.Stop()
	if g := get(t, p.URL+"/slow.json"); g.body != `"second"` {
		t.Errorf("a request after Stop: %+v, want the new document at once", g)
	}
	select {
	case g := <-answered:
		t.Fatalf("the held request was answered before Release: %+v", g)
	default:
	}
	hold.Release()
	hold.Release() // twice does nothing
	if g := <-answered; g.status != 200 || g.body != `"first"` {
		t.Errorf("held request: %+v, want the document of its arrival", g)
	}
	if n := p.Requests("/slow.json"); n != 2 {
		t.Errorf("Requests = %d, want 2", n)
	}
}

// A held request whose client gives up ends without an answer, and the
// test ends with a hold never released: the cleanup lets it go.
func TestHeldClientGivesUp(t *testing.T) {
	t.Parallel()
	p := publisher.New(t)
	p.Set("/hang.json", []byte(document))
	p.Hold("/hang.json")
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/hang.json", nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("a held request was answered: %d", resp.StatusCode)
	}
}

// Handle, Fallback, OnRequest and On: a test's own answer for a path, a
// handler for every path not published, a look at each request as it
// arrives, another loopback address.
func TestHandlersAndAddress(t *testing.T) {
	t.Parallel()
	fallback := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "fallback "+r.URL.Path) })
	p := publisher.New(t, publisher.On("127.0.0.2:0"), publisher.Fallback(fallback))
	if !strings.HasPrefix(p.URL, "http://127.0.0.2:") || p.URL != "http://"+p.Addr() {
		t.Errorf("URL = %s, Addr = %s, want both on 127.0.0.2", p.URL, p.Addr())
	}
	var seen atomic.Int32
	p.OnRequest(func(r *http.Request) { seen.Add(1) })
	p.Handle("/own.json", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "own") }))
	p.Set("/doc.json", []byte(document))
	for path, want := range map[string]string{"/own.json": "own", "/doc.json": document, "/other.json": "fallback /other.json"} {
		if g := get(t, p.URL+path); g.body != want {
			t.Errorf("%s: %+v, want %q", path, g, want)
		}
	}
	if n := seen.Load(); n != 3 {
		t.Errorf("OnRequest saw %d requests, want 3", n)
	}
}

// AwaitRequests fails its test when the requests do not come.
func TestAwaitRequestsTimesOut(t *testing.T) {
	t.Parallel()
	p := publisher.New(t)
	ft := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.AwaitRequests(ft, "/never.json", 1, 50*time.Millisecond)
	}()
	<-done
	if !ft.failed.Load() {
		t.Fatal("AwaitRequests returned without the request and without failing")
	}
}

// fakeT records a Fatalf and ends the goroutine as t.Fatalf would.
type fakeT struct {
	testing.TB
	failed atomic.Bool
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(string, ...any) {
	f.failed.Store(true)
	runtime.Goexit()
}

func getNoFatal(url string) got {
	resp, err := http.Get(url)
	if err != nil {
		return got{body: err.Error()}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return got{status: resp.StatusCode, body: string(b)}
}
