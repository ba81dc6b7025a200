package npm

import (
	"errors"
	"testing"
)

func TestSource(t *testing.T) {
	t.Parallel()
	if !IsSource("npm:@acme/blog") || IsSource("https://127.0.0.1/doc.json") || IsSource("offline:acme") {
		t.Error("IsSource tells npm sources from others wrongly")
	}
	n, err := ParseSource("npm:@acme/blog")
	if err != nil || n != "@acme/blog" || Source(n) != "npm:@acme/blog" {
		t.Errorf("ParseSource: %q, %v", n, err)
	}
	for _, bad := range []string{"npm:", "npm:Bad Name", "npm:@acme", "https://x"} {
		if _, err := ParseSource(bad); err == nil || (bad != "https://x" && !errors.Is(err, ErrName)) {
			t.Errorf("ParseSource(%q) = %v", bad, err)
		}
	}
}
