package views

import "testing"

// A webhook's signing secret, shown once, wraps on a phone as an API
// token's does (notice-secret).
func TestWebhookSecretWraps(t *testing.T) {
	t.Parallel()
	if n := one(t, doc(t, pages()["notifications"]), "notify-secret"); !hasClass(n, "notice-secret") {
		t.Error("the webhook secret's notice has no notice-secret class")
	}
}
