package npmreg

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	mrand "math/rand/v2"
	"testing"

	"github.com/upcheck/upcheck/internal/npm"
)

// The registry's sized documents are what the bench names: 500, most
// between 20 and 200 KB, ten of 5 MB, one of 40 MB.
func TestDocumentSizes(t *testing.T) {
	t.Parallel()
	small, big, huge := 0, 0, 0
	for i := range SizedPackages {
		rng := mrand.New(mrand.NewPCG(uint64(i), 23))
		switch s := npmSize(i, rng); {
		case s == hugeSize:
			huge++
		case s == SizedBig:
			big++
		case s >= smallMin && s <= smallMax:
			small++
		default:
			t.Errorf("package %d: %d bytes", i, s)
		}
	}
	if small != SizedPackages-11 || big != 10 || huge != 1 {
		t.Errorf("%d small, %d of 5 MB, %d of 40 MB; want %d, 10, 1", small, big, huge, SizedPackages-11)
	}
}

// fixedSigner signs as a registry's key would, with signatures of a real
// one's length, but the same every run.
type fixedSigner struct{}

func (fixedSigner) Sign(name, version, integrity string) (npm.Signature, error) {
	sum := sha256.Sum256([]byte(name + "@" + version + ":" + integrity))
	return npm.Signature{KeyID: "SHA256:fixed", Sig: base64.StdEncoding.EncodeToString(append(append(sum[:], sum[:]...), sum[:8]...))}, nil
}

// The bench compares its figures across runs, so the generator writes the
// same documents, byte for byte, every run (the hash was taken with this
// signer and base, since a moved dependency keeps its package but one time
// in movedPackage): the core, scoped and unscoped ones, one installed
// half-way, a deprecated one and a 5 MB one.
func TestSizedDocumentsStayTheSame(t *testing.T) {
	t.Parallel()
	h := sha256.New()
	for _, i := range []int{0, 1, 2, 3, 7, 25, 32} {
		d, err := GenerateSized(i, fixedSigner{}, "http://127.0.0.1:1")
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s|%s|%s|%d|%d|", d.Name, d.Installed, d.Latest, d.Versions, d.Raw)
		h.Write(d.Gzipped)
	}
	const want = "9b61ca396ee01ac0822739679f3a77ba72794d30a7ec260b1ad363ec2097f7a2"
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
		t.Errorf("the generated documents' hash is %s, want %s: the bench's documents changed", got, want)
	}
}
