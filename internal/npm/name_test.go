package npm

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"blog", "@vitnode/core", "@acme/blog.js", "example.com", "under_score", "123numeric",
		"crazy!", "JSONStream", strings.Repeat("a", 300), "@a/b"} {
		if n, err := ValidateName(ok); err != nil || string(n) != ok {
			t.Errorf("ValidateName(%q) = %q, %v; want it valid", ok, n, err)
		}
	}
	for bad, why := range map[string]string{
		"":               "is empty",
		" blog":          "spaces",
		"blog ":          "spaces",
		".blog":          "starts with a dot",
		"_blog":          "starts with a dot or an underscore",
		"@acme/_blog":    "starts with a dot or an underscore",
		"node_modules":   "reserved",
		"favicon.ico":    "reserved",
		"@acme":          `"@scope/name"`,
		"@/blog":         `"@scope/name"`,
		"@acme/":         `"@scope/name"`,
		"a/b":            "URL",
		"@acme/blog/x":   "URL",
		"bl og":          "URL",
		"blög":           "URL",
		"@ac me/blog":    "scope",
		"leading:colon":  "URL",
		"@acme/blog%2fx": "URL",
		"blog?version=1": "URL",
		"blog#fragment":  "URL",
	} {
		_, err := ValidateName(bad)
		if !errors.Is(err, ErrName) || !strings.Contains(err.Error(), why) {
			t.Errorf("ValidateName(%q) = %v; want ErrName saying %q", bad, err, why)
		}
	}
}

func TestNameParts(t *testing.T) {
	t.Parallel()
	for name, want := range map[Name][2]string{
		"blog":          {"", "blog"},
		"@acme/blog":    {"@acme", "@acme%2fblog"},
		"@vitnode/core": {"@vitnode", "@vitnode%2fcore"},
		"crazy!":        {"", "crazy!"},
	} {
		if got := [2]string{name.Scope(), name.PathSegment()}; got != want {
			t.Errorf("%q: scope and path segment %q, want %q", name, got, want)
		}
	}
}
