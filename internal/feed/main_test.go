package feed

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: a
// download or a query the fetcher did not let go of.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
