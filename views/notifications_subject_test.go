package views

import "testing"

// An event's subject on the page names the site of a site's event.
func TestEventSubjectNamesTheSite(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{
		"security_update.available:blog@2.4.0":               "blog@2.4.0",
		"tree.finding:debug@4.4.2/MAL-1":                     "debug@4.4.2/MAL-1",
		"tree.finding@shop:@acme/x@4.4.2/MAL-1":              "shop: @acme/x@4.4.2/MAL-1",
		"tree.exposed@shop:debug@4.4.2/MAL-1@2026-01-01T00Z": "shop: debug@4.4.2/MAL-1@2026-01-01T00Z",
		"fleet.finding:debug@4.4.2/MAL-1#ab12":               "debug@4.4.2/MAL-1#ab12",
		"test:5f0c":                                          "",
	} {
		if got := EventSubject(key); got != want {
			t.Errorf("EventSubject(%q) = %q, want %q", key, got, want)
		}
	}
}
