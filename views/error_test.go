package views

import (
	"strings"
	"testing"
)

// An error page says its title once: a message that only repeats it (echo's
// bare "Not Found", "Forbidden") gives way to the status's sentence.
func TestErrorPageSaysItsTitleOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status        int
		message, want string
	}{
		{404, "Not Found", "There is nothing at this address."},
		{404, "Not found.", "There is nothing at this address."},
		{403, "Forbidden", "Your account is not allowed to do this."},
		{403, "Only administrators can dismiss advisories.", "Only administrators can dismiss advisories."},
	} {
		title, _ := errorText(tc.status)
		for name, c := range map[string]func(ErrorProps) string{
			"bare": func(p ErrorProps) string { return visibleText(one(t, doc(t, ErrorPage(p)), "error-page")) },
			"layout": func(p ErrorProps) string {
				return visibleText(one(t, doc(t, ErrorInLayout(layout(calm(), true), p)), "error-page"))
			},
		} {
			shown := c(ErrorProps{Status: tc.status, Message: tc.message, Asset: testAsset})
			if !strings.Contains(shown, tc.want) {
				t.Errorf("%s %d %q: %q, want %q", name, tc.status, tc.message, shown, tc.want)
			}
			if rest := strings.Replace(shown, title, "", 1); strings.Contains(strings.ToLower(rest), strings.ToLower(strings.TrimSuffix(tc.message, "."))) &&
				tc.message != tc.want {
				t.Errorf("%s %d: the card says its title again as %q: %q", name, tc.status, tc.message, shown)
			}
		}
	}
}
