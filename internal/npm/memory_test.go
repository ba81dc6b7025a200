package npm_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/npm"
)

// bigDocument is a package document of about size bytes, written as it is
// read (a version at a time, into one reused buffer) so that neither the
// test nor its registry holds it whole or allocates for it: whatever a
// reader of it allocates is the reader's own. Each version's manifest is
// 8 KB, most of it dependencies that are read past, as in a popular
// package's document; then the publish times and a readme.
type bigDocument struct {
	versions int
	next     int // the next version to write; versions+1 once the tail is out
	buf      []byte
	off      int
	filler   []byte
}

func newBigDocument(size int) *bigDocument {
	var deps bytes.Buffer
	deps.WriteString(`"dependencies":{`)
	for i := 0; deps.Len() < 7800; i++ {
		if i > 0 {
			deps.WriteByte(',')
		}
		deps.WriteString(`"dep-` + strconv.Itoa(i) + `":"^1.` + strconv.Itoa(i%20) + `.0"`)
	}
	deps.WriteString(`},`)
	d := &bigDocument{versions: size / (deps.Len() + 300), filler: deps.Bytes()}
	d.buf = append(d.buf, `{"_id":"big","name":"big","dist-tags":{"latest":"1.0.`...)
	d.buf = strconv.AppendInt(d.buf, int64(d.versions-1), 10)
	d.buf = append(d.buf, `"},"versions":{`...)
	return d
}

func (d *bigDocument) Read(p []byte) (int, error) {
	for d.off == len(d.buf) {
		if d.next > d.versions {
			return 0, io.EOF
		}
		d.buf, d.off = d.buf[:0], 0
		k := d.next
		d.next++
		if k == d.versions {
			d.buf = append(d.buf, `},"time":{"created":"2020-01-01T00:00:00.000Z"`...)
			for v := range d.versions {
				d.buf = append(d.buf, `,"1.0.`...)
				d.buf = strconv.AppendInt(d.buf, int64(v), 10)
				d.buf = append(d.buf, `":"2021-01-01T00:00:00.000Z"`...)
			}
			d.buf = append(d.buf, `},"readme":"`...)
			d.buf = append(d.buf, bytes.Repeat([]byte("a readme line "), 1000)...)
			d.buf = append(d.buf, `"}`...)
			break
		}
		if k > 0 {
			d.buf = append(d.buf, ',')
		}
		d.buf = append(d.buf, `"1.0.`...)
		d.buf = strconv.AppendInt(d.buf, int64(k), 10)
		d.buf = append(d.buf, `":{"name":"big","version":"1.0.`...)
		d.buf = strconv.AppendInt(d.buf, int64(k), 10)
		d.buf = append(d.buf, `",`...)
		d.buf = append(d.buf, d.filler...)
		d.buf = append(d.buf, `"peerDependencies":{"core":">=1"},"_npmUser":{"name":"someone"},"dist":{"integrity":"sha512-`...)
		d.buf = strconv.AppendInt(d.buf, int64(k), 16)
		d.buf = append(d.buf, `","shasum":"0123456789abcdef0123456789abcdef01234567","tarball":"http://127.0.0.1/big/-/big.tgz",`+
			`"signatures":[{"keyid":"SHA256:key","sig":"MEUCIQDsig"}]}}`...)
	}
	n := copy(p, d.buf[d.off:])
	d.off += n
	return n, nil
}

// allocated is what fn allocated, in bytes, counted by the runtime: the
// test calling it is not parallel, so nothing else of the package's runs
// meanwhile.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

const bigSize = 24 << 20

// A package document of tens of megabytes is decoded as a stream: what
// the decoder allocates follows what it keeps (about 2 KB a version, here
// a quarter of the document), not the document. A decoder that read the
// document whole (io.ReadAll, json.Unmarshal) would allocate more than the
// document. Not parallel: the runtime's count of allocations is the whole
// process's.
func TestDecodingALargeDocumentFollowsWhatIsKept(t *testing.T) {
	doc := newBigDocument(bigSize)
	var pkg *npm.Package
	var err error
	n := allocated(func() { pkg, err = npm.DecodePackage(doc, npm.DefaultMaxDocument) })
	if err != nil {
		t.Fatal(err)
	}
	if len(pkg.Versions) != doc.versions || pkg.Versions["1.0.7"].Dist.Integrity != "sha512-7" || pkg.Published["1.0.7"].IsZero() {
		t.Fatalf("%d versions of %d, 1.0.7: %+v", len(pkg.Versions), doc.versions, pkg.Versions["1.0.7"])
	}
	t.Logf("%d versions, %d MiB: %.1f MiB allocated", doc.versions, bigSize>>20, float64(n)/(1<<20))
	if n > bigSize/2 {
		t.Errorf("decoding a %d MiB document allocated %.1f MiB; want under half of it", bigSize>>20, float64(n)/(1<<20))
	}
}

// A registry (or proxy) that sends the document uncompressed whatever the
// client accepts: the body is spooled to a temporary file as it arrives
// and decoded from it, never held in memory whole (the check's peak RSS
// with a 40 MB document sent so was 162 MiB when it was). The file is gone
// once the package is read. Not parallel: the runtime's count of
// allocations is the whole process's, and TMPDIR is set for the test.
func TestAnUncompressedDocumentIsNeverHeldWhole(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			t.Error("the client did not ask for gzip")
		}
		_, _ = io.Copy(w, newBigDocument(bigSize))
	}))
	t.Cleanup(srv.Close)
	regs, err := npm.LoadRegistries(srv.URL, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	f := fetch.New(fetch.Config{AllowPrivate: true}, nil)
	t.Cleanup(f.Close)
	c := &npm.Client{Fetcher: f, Registries: regs}
	var got npm.Fetched
	n := allocated(func() { got, err = c.Package(t.Context(), "big", "", "") })
	if err != nil {
		t.Fatal(err)
	}
	if got.Package == nil || len(got.Package.Versions) < 1000 || got.Response.Body != nil || got.Response.Spool != nil {
		t.Fatalf("package %v, response %+v", got.Package != nil, got.Response)
	}
	t.Logf("%d bytes fetched: %.1f MiB allocated", got.Response.Bytes, float64(n)/(1<<20))
	if n > bigSize/2 {
		t.Errorf("fetching and decoding a %d MiB document sent uncompressed allocated %.1f MiB; want under half of it",
			bigSize>>20, float64(n)/(1<<20))
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("files left in TMPDIR: %v", left)
	}
}

// A document read for a fix keeps the dependencies of the releases at or
// above the installed one only: decoding it allocates what is kept, here
// the last 5 % of the versions' 400 dependencies each, beside what
// DecodePackage keeps, not the document's dependencies. Not parallel, as
// above.
func TestKeepingDependenciesFollowsTheVersionsKept(t *testing.T) {
	doc := newBigDocument(bigSize)
	from := doc.versions * 95 / 100
	keep := func(v string) bool {
		n, err := strconv.Atoi(strings.TrimPrefix(v, "1.0."))
		return err == nil && n >= from
	}
	var pkg *npm.Package
	var err error
	n := allocated(func() { pkg, err = npm.DecodePackageKeeping(doc, npm.DefaultMaxDocument, keep) })
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, v := range pkg.Versions {
		if v.Dependencies != nil {
			kept++
		}
	}
	if want := doc.versions - from; kept != want || len(pkg.Versions["1.0."+strconv.Itoa(from)].Dependencies) < 100 {
		t.Fatalf("%d versions kept their dependencies, want %d", kept, want)
	}
	t.Logf("%d versions, %d with their dependencies, %d MiB: %.1f MiB allocated", doc.versions, kept, bigSize>>20, float64(n)/(1<<20))
	if n > bigSize*3/4 {
		t.Errorf("decoding a %d MiB document keeping 5%% of its dependencies allocated %.1f MiB; want under three quarters of it", bigSize>>20, float64(n)/(1<<20))
	}
}
