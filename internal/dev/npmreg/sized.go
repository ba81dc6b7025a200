package npmreg

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/npm"
)

// Sized documents are the bench's (cmd/upcheck-bench, part 8): package
// documents of the sizes a real registry serves, generated from a seed so
// that every run serves the same bytes (but for the signatures, made with
// the run's key) and the bench's figures compare across runs. The
// generator's output is held by TestSizedDocumentsStayTheSame.

// The bench's documents: SizedPackages package documents of the sizes the
// bench names (most 20–200 KB, ten of 5 MB, one of 40 MB: SizedBig and
// hugeSize), one of them SizedCore's, the core's.
const (
	SizedPackages = 500
	SizedCore     = "@bench/core"
	smallMin      = 20 << 10
	smallMax      = 200 << 10
	SizedBig      = 5 << 20
	hugeSize      = 40 << 20
)

// npmSize is the decoded size of package i's document: the ten 5 MB ones
// and the 40 MB one spread through the list, the others between smallMin
// and smallMax, log-uniform (most documents are small).
func npmSize(i int, rng *mrand.Rand) int {
	switch {
	case i == SizedPackages/2:
		return hugeSize
	case i%50 == 25:
		return SizedBig
	}
	f := float64(smallMin) * math.Pow(float64(smallMax)/float64(smallMin), rng.Float64())
	return int(f)
}

func npmName(i int) string {
	switch {
	case i == 0:
		return SizedCore
	case i%3 == 0:
		return fmt.Sprintf("bench-lib-%03d", i)
	}
	return fmt.Sprintf("@bench/plugin-%03d", i)
}

// Sized is one generated package document as the registry keeps it:
// gzipped, as a real registry stores and sends it, with what a manifest of
// its installed version needs.
type Sized struct {
	Name      string
	Gzipped   []byte
	Raw       int // decoded size
	Installed string
	Latest    string
	Versions  int
	// Dependency: a dependency's document (GenerateDependency), counted
	// apart (Registry.Dependencies).
	Dependency bool
}

// Signer signs NAME@VERSION:INTEGRITY as the registry does
// (npm.SigningKey; a fixed one in the generator's test).
type Signer interface {
	Sign(name, version, integrity string) (npm.Signature, error)
}

// GenerateSized writes package i's document the way a registry's full document
// reads: every version's whole manifest (dependencies, scripts, dist with
// integrity, shasum, tarball, the registry's signature by key, provenance for some
// packages, the publisher), the publish time of each, maintainers and a
// readme, until it reaches its size. The installed version is one to
// twenty releases behind the latest for most packages, the latest for one
// in ten, half-way along the versions for one in ten (a site far behind;
// none of them a 5 MB or the 40 MB document, whose place in the list
// ends in 5 and 0); one in twenty-five has its installed version
// deprecated. base is the registry's URL, without a trailing slash: the
// tarballs and attestations are below it.
func GenerateSized(i int, key Signer, base string) (*Sized, error) {
	rng := mrand.New(mrand.NewPCG(uint64(i), 23))
	size := npmSize(i, rng)
	name := npmName(i)
	d := &Sized{Name: name}
	// About 3 KB a version, up to 3,000 versions: the biggest packages
	// have the most versions and the biggest manifests (the 40 MB one
	// about 13 KB each, as the registry's largest documents do).
	versions := min(max(size/3000, 8), 3000)
	// A package keeps its dependencies from version to version, an eighth
	// of them moving each time, as real ones do (what makes a real document
	// compress several times): a moved one takes another range, and now
	// and then another package (moveDep).
	deps := make([]string, max(6, (size/versions-1100)/30))
	for j := range deps {
		deps[j] = depRange(rng)
	}
	provenance := i%3 == 1

	var versionsBuf, timesBuf bytes.Buffer
	published := time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)
	var list []string
	readme := words(rng, min(12<<10, size/20))
	fixed := 0 // the bytes outside versions and times
	estimate := func() int { return versionsBuf.Len() + timesBuf.Len() + fixed + len(readme) }
	fixed = 600
	for k := 0; k == 0 || estimate() < size; k++ {
		v := fmt.Sprintf("%d.%d.%d", k/100+1, (k/10)%10, k%10)
		list = append(list, v)
		published = published.Add(time.Duration(rng.IntN(72)+1) * time.Hour)
		if k > 0 {
			versionsBuf.WriteByte(',')
			timesBuf.WriteByte(',')
		}
		fmt.Fprintf(&timesBuf, "%q:%q", v, published.Format("2006-01-02T15:04:05.000Z"))
		for range max(1, len(deps)/8) {
			j := rng.IntN(len(deps))
			deps[j] = moveDep(rng, deps[j])
		}
		if err := versionManifest(&versionsBuf, rng, key, base, name, v, deps, provenance && k > 0); err != nil {
			return nil, err
		}
	}
	d.Latest, d.Versions = list[len(list)-1], len(list)
	switch i % 10 {
	case 0:
		d.Installed = d.Latest
	case 3:
		d.Installed = list[len(list)/2]
	default:
		d.Installed = list[max(0, len(list)-1-(1+rng.IntN(20)))]
	}
	deprecated := i%25 == 7

	if err := d.write(rng, list, versionsBuf.Bytes(), timesBuf.Bytes(), readme, published, deprecated); err != nil {
		return nil, err
	}
	return d, nil
}

// write makes d's document of the versions' manifests and times written
// (its installed version's deprecated when deprecated), raw and gzipped.
func (d *Sized) write(rng *mrand.Rand, list []string, versions, times []byte, readme string, published time.Time, deprecated bool) error {
	name := d.Name
	var doc bytes.Buffer
	fmt.Fprintf(&doc, `{"_id":%q,"_rev":"%d-%s","name":%q,"description":"The %s package of the benchmark registry",`,
		name, len(list), hexOf(rng, 16), name, name)
	fmt.Fprintf(&doc, `"dist-tags":{"latest":%q,"next":%q},"versions":{`, d.Latest, d.Latest)
	if deprecated {
		// The installed version's manifest, deprecated, ahead of the others
		// would be out of order: rewrite it in place instead.
		marker := fmt.Sprintf(`"version":%q,`, d.Installed)
		b := bytes.Replace(versions, []byte(marker),
			[]byte(marker+`"deprecated":"this version has a bug in its upgrade step, use the latest",`), 1)
		doc.Write(b)
	} else {
		doc.Write(versions)
	}
	fmt.Fprintf(&doc, `},"time":{"created":"2019-01-01T00:00:00.000Z","modified":%q,`, published.Format(time.RFC3339))
	doc.Write(times)
	fmt.Fprintf(&doc, `},"maintainers":[{"name":"bench-maintainer","email":"maintainer@example.test"}],`+
		`"readme":%q,"readmeFilename":"README.md","license":"MIT","keywords":["bench","plugin"]}`, readme)
	d.Raw = doc.Len()
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.DefaultCompression)
	zw.Write(doc.Bytes())
	if err := zw.Close(); err != nil {
		return err
	}
	d.Gzipped = gz.Bytes()
	return nil
}

// versionManifest writes one version's manifest, with dist signed by key
// over NAME@VERSION:INTEGRITY as the registry signs.
func versionManifest(w *bytes.Buffer, rng *mrand.Rand, key Signer, reg, name, v string, deps []string, provenance bool) error {
	sum := make([]byte, 64)
	for j := range sum {
		sum[j] = byte(rng.Uint32())
	}
	integrity := "sha512-" + base64.StdEncoding.EncodeToString(sum)
	sig, err := key.Sign(name, v, integrity)
	if err != nil {
		return err
	}
	base := name[strings.LastIndexByte(name, '/')+1:]
	peer := fmt.Sprintf(`"peerDependencies":{%q:">=1.0.0"},`, SizedCore)
	if name == SizedCore {
		peer = ""
	}
	fmt.Fprintf(w, `%q:{"name":%q,"version":%q,"description":"The %s package of the benchmark registry","main":"dist/index.js",`+
		`"types":"dist/index.d.ts","scripts":{"build":"tsc -p .","test":"node --test"},"repository":{"type":"git","url":"git+https://example.test/bench/%s.git"},`+
		`"author":{"name":"Bench Author"},"license":"MIT",%s"dependencies":{`,
		v, name, v, name, base, peer)
	w.WriteString(strings.Join(deps[:len(deps)/3], ","))
	w.WriteString(`},"devDependencies":{`)
	w.WriteString(strings.Join(deps[len(deps)/3:], ","))
	fmt.Fprintf(w, `},"gitHead":%q,"_id":"%s@%s","_nodeVersion":"20.11.1","_npmVersion":"10.2.4",`, hexOf(rng, 20), name, v)
	fmt.Fprintf(w, `"dist":{"integrity":%q,"shasum":%q,"tarball":"%s/%s/-/%s-%s.tgz","fileCount":%d,"unpackedSize":%d,`,
		integrity, hexOf(rng, 20), reg, name, base, v, rng.IntN(200)+5, rng.IntN(2<<20)+4096)
	fmt.Fprintf(w, `"signatures":[{"keyid":%q,"sig":%q}]`, sig.KeyID, sig.Sig)
	if provenance {
		fmt.Fprintf(w, `,"attestations":{"url":"%s/-/npm/v1/attestations/%s@%s","provenance":{"predicateType":"https://slsa.dev/provenance/v1"}}`, reg, name, v)
	}
	w.WriteString(`},"_npmUser":{"name":"bench-maintainer","email":"maintainer@example.test"},` +
		`"maintainers":[{"name":"bench-maintainer","email":"maintainer@example.test"}],"directories":{},"_hasShrinkwrap":false}`)
	return nil
}

func depRange(rng *mrand.Rand) string {
	return fmt.Sprintf(`"bench-dep-%04d":"^%d.%d.%d"`, rng.IntN(SizedDependencies), rng.IntN(9)+1, rng.IntN(20), rng.IntN(20))
}

// The dependencies the sized documents declare: bench-dep-0000 to
// bench-dep-4999 (SizedDependencies), each a package the registry serves
// (GenerateDependency). A moved dependency takes another package one
// time in movedPackage (a real release rarely adds one), out of the
// popularDependencies most common ones, so that the 500 offered updates
// add some tens of distinct packages, as a site's updates do, not
// thousands.
const (
	SizedDependencies   = 5000
	popularDependencies = 100
	movedPackage        = 400
)

// moveDep moves the dependency dep ("name":"range"): another range of the
// same package, or, one time in movedPackage, a popular package instead.
func moveDep(rng *mrand.Rand, dep string) string {
	major, minor, patch := rng.IntN(9)+1, rng.IntN(20), rng.IntN(20)
	if rng.IntN(movedPackage) == 0 {
		return fmt.Sprintf(`"bench-dep-%04d":"^%d.%d.%d"`, rng.IntN(popularDependencies), major, minor, patch)
	}
	name, _, _ := strings.Cut(dep, ":")
	return fmt.Sprintf(`%s:"^%d.%d.%d"`, name, major, minor, patch)
}

// DependencyName is the name of the sized documents' dependency i.
func DependencyName(i int) string { return fmt.Sprintf("bench-dep-%04d", i) }

// GenerateDependency writes the package document of the sized documents'
// dependency i (DependencyName): a few KB, versions 1.0.0 to 9.19.19 by
// tens, first published in 2015, one in ten (the popular ones among them:
// i%10 == 5) first published in 2030, after every sized release, so that
// it is a young dependency of every update that adds it.
func GenerateDependency(i int) (*Sized, error) {
	name := DependencyName(i)
	created := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)
	if i%10 == 5 {
		created = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)
	}
	var versions, times bytes.Buffer
	published := created
	n := 0
	for major := 1; major <= 9; major++ {
		for minor := 0; minor < 20; minor += 5 {
			for patch := 0; patch < 20; patch += 10 {
				v := fmt.Sprintf("%d.%d.%d", major, minor, patch)
				if n > 0 {
					versions.WriteByte(',')
					times.WriteByte(',')
				}
				fmt.Fprintf(&versions, `%q:{"name":%q,"version":%q,"dist":{"integrity":"sha512-x","tarball":"t"}}`, v, name, v)
				fmt.Fprintf(&times, "%q:%q", v, published.Format("2006-01-02T15:04:05.000Z"))
				published = published.Add(24 * time.Hour)
				n++
			}
		}
	}
	var doc bytes.Buffer
	fmt.Fprintf(&doc, `{"_id":%q,"name":%q,"dist-tags":{"latest":"9.15.10"},"versions":{`, name, name)
	doc.Write(versions.Bytes())
	fmt.Fprintf(&doc, `},"time":{"created":%q,"modified":%q,`, created.Format(time.RFC3339), published.Format(time.RFC3339))
	doc.Write(times.Bytes())
	doc.WriteString(`},"readme":"A dependency of the benchmark registry's packages."}`)
	d := &Sized{Name: name, Raw: doc.Len(), Dependency: true}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.DefaultCompression)
	zw.Write(doc.Bytes())
	if err := zw.Close(); err != nil {
		return nil, err
	}
	d.Gzipped = gz.Bytes()
	return d, nil
}

func hexOf(rng *mrand.Rand, n int) string {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(rng.Uint32())
	}
	return hex.EncodeToString(b)
}

var vocabulary = strings.Fields(`the plugin adds a page to the admin panel with settings for each site and
	a hook that runs after every upgrade install configure your options in the config file then restart
	the server to load them see the changelog for breaking changes between major versions usage example
	import the module and call register with the app instance it returns a promise that resolves when ready`)

// words is about n bytes of readme prose.
func words(rng *mrand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if rng.IntN(12) == 0 {
			b.WriteString("\n\n## ")
		}
		b.WriteString(vocabulary[rng.IntN(len(vocabulary))])
		b.WriteByte(' ')
	}
	return b.String()
}
