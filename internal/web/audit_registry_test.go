package web

import (
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/views"
)

// An npm registry's keys pinned on first sight, and changed, are worded
// with the registry and the key ids (the check's audit detail:
// registry, old_keys, new_keys), by nobody but a check.
func TestRegistryKeysAuditInWords(t *testing.T) {
	t.Parallel()
	detail := []byte(`{"registry": "http://127.0.0.1:4873/", "old_keys": ["SHA256:old"], "new_keys": ["SHA256:a", "SHA256:b"]}`)
	for action, want := range map[readmodel.AuditAction]string{
		readmodel.AuditRegistryKeysPin:    "http://127.0.0.1:4873/: keys SHA256:a, SHA256:b pinned on first sight",
		readmodel.AuditRegistryKeysChange: "http://127.0.0.1:4873/: key SHA256:old → keys SHA256:a, SHA256:b",
	} {
		got := detailText(readmodel.AuditRow{Kind: string(readmodel.AuditKindTrust), Action: string(action), Detail: detail})
		if got != want {
			t.Errorf("%s: %q, want %q", action, got, want)
		}
		if who := views.AuditActorText("", string(action)); who != "a check, reading the registry’s keys" {
			t.Errorf("%s: by %q", action, who)
		}
	}
	// No key before nor after is said in words, not "keys none → none".
	empty := []byte(`{"registry": "http://127.0.0.1:4873/", "old_keys": [], "new_keys": []}`)
	for action, want := range map[readmodel.AuditAction]string{
		readmodel.AuditRegistryKeysPin:    "http://127.0.0.1:4873/: it publishes no signing keys (first sight)",
		readmodel.AuditRegistryKeysChange: "http://127.0.0.1:4873/: no key → no key",
	} {
		if got := detailText(readmodel.AuditRow{Kind: string(readmodel.AuditKindTrust), Action: string(action), Detail: empty}); got != want {
			t.Errorf("%s with no keys: %q, want %q", action, got, want)
		}
	}
}
