package web

import (
	"testing"
	"time"
)

// A flash opens only with the session that sealed it, and says what it
// was given.
func TestFlashSealedToItsSession(t *testing.T) {
	t.Parallel()
	f := flash{Page: "/admin/tokens", Expires: time.Now().Add(time.Minute), Values: map[string]string{"secret": "upk_s3cr3t"}}
	sealed, err := sealFlash("session-a", f)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := openFlash("session-a", sealed)
	if !ok || got.Values["secret"] != "upk_s3cr3t" || got.Page != f.Page {
		t.Fatalf("openFlash with its own session = %+v, %v", got, ok)
	}
	if got, ok := openFlash("session-b", sealed); ok {
		t.Fatalf("another session opened the flash: %+v", got)
	}
	if _, ok := openFlash("session-a", sealed[:len(sealed)-2]+"AA"); ok {
		t.Fatal("a tampered flash opened")
	}
}
