package release

import (
	"errors"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in string
		ok bool
	}{
		{"1.2.3", true},
		{"0.0.0", true},
		{"1.2.3-beta.1", true},
		{"1.2.3-rc.1+build.5", true},
		{"1.2.3+build.5", true},
		{"v1.2.3", false},
		{"v1.2", false},
		{"1.2", false},
		{"1", false},
		{"01.2.3", false},
		{"1.2.3-", false},
		{"1.2.3-01", false},
		{" 1.2.3", false},
		{"1.2.3 ", false},
		{"", false},
		{"abc", false},
		{"1.2.3.4", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			v, err := ParseVersion(tt.in)
			if tt.ok {
				if err != nil {
					t.Fatalf("ParseVersion(%q) = %v, want success", tt.in, err)
				}
				if v.Original() != tt.in {
					t.Errorf("Original() = %q, want %q", v.Original(), tt.in)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseVersion(%q) succeeded, want an error", tt.in)
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "is not a semantic version") {
				t.Errorf("error = %q, want ErrInvalid saying it is not a semantic version", err)
			}
		})
	}
}
