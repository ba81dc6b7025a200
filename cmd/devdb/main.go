// Command devdb manages the private PostgreSQL clusters of development and
// tests. `go run ./cmd/devdb stop` (make stop) stops every cluster under
// .data (or $UPCHECK_DATA_DIR): the one `make run` uses, the tests' and the
// benchmark's; their data stays for the next run.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/upcheck/upcheck/internal/dev/devdb"
)

func main() {
	if len(os.Args) != 2 || os.Args[1] != "stop" {
		fmt.Fprintln(os.Stderr, "usage: devdb stop   (stop every private cluster under $UPCHECK_DATA_DIR, default .data)")
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	root := os.Getenv("UPCHECK_DATA_DIR")
	if root == "" {
		root = ".data"
	}
	stopped, err := devdb.StopAll(ctx, root)
	for _, dir := range stopped {
		fmt.Println("stopped", dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "devdb:", err)
		os.Exit(1)
	}
	if len(stopped) == 0 {
		fmt.Println("no private cluster is running under", root)
	}
}
