package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/upcheck/upcheck/internal/app"
	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/localfile"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// importExit maps an import's status to its exit code (docs/design.md
// section 6).
var importExit = map[updatecheck.ImportStatus]int{
	updatecheck.Imported:        0,
	updatecheck.ImportUnchanged: 0,
	updatecheck.ImportBusy:      3, // as check's busy
	updatecheck.ImportRefused:   8,
}

// runSource is `upcheck source import --source URL FILE [--sig FILE]`: a
// document obtained elsewhere (a mirror, a USB stick) accepted under the
// rules of a fetched one. It prints one JSON line; a refusal is also said
// in words on stderr.
func runSource(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "import" {
		fmt.Fprintf(stderr, "upcheck source: want \"import\"\n%s", helpPointer("source"))
		return errUsage
	}
	var source, sigPath string
	define := func(fs *flag.FlagSet) {
		// The current values as defaults: the flags may be parsed twice.
		fs.StringVar(&source, "source", source, "the update source the document is for, as the manifest names it (a URL or offline:NAME)")
		fs.StringVar(&sigPath, "sig", sigPath, "its detached signature, as served at <url>.sig")
	}
	files, err := parseFlags("source import", args[1:], stderr, define)
	if err != nil {
		return err
	}
	if len(files) > 0 { // flags may follow the file
		more, err := parseFlags("source import", files[1:], stderr, define)
		if err != nil {
			return err
		}
		files = append(files[:1], more...)
	}
	if source == "" || len(files) != 1 {
		fmt.Fprintln(stderr, "upcheck source import: --source URL and one document FILE are required")
		return errUsage
	}
	return withApp(ctx, cfg, logger, func(a *app.App) error {
		body, err := readUpTo(files[0], a.Importer.Limit()+1) // one byte more: the import refuses it as too large
		if err != nil {
			return err
		}
		var sig []byte
		if sigPath != "" {
			if sig, err = readCapped(sigPath, fetch.SignatureMaxBody); err != nil {
				return err
			}
		}
		res, err := a.Importer.Import(ctx, source, body, string(sig), readmodel.ActorCLI)
		if errors.Is(err, updatecheck.ErrUnknownSource) {
			return fmt.Errorf("source import: %w: %s (the manifest names the sources)", err, source)
		}
		if err != nil {
			return err
		}
		line := struct {
			updatecheck.ImportResult
			Problem string `json:"problem,omitempty"`
		}{ImportResult: res}
		switch res.Status {
		case updatecheck.ImportRefused:
			line.Problem = readmodel.ProblemSentence(string(res.Kind), res.Args)
			fmt.Fprintf(stderr, "upcheck source import: refused: %s The stored document stays.\n", line.Problem)
		case updatecheck.ImportBusy:
			fmt.Fprintln(stderr, "upcheck source import: a check is running; nothing was imported. Try again when it has finished.")
		}
		if err := json.NewEncoder(stdout).Encode(line); err != nil {
			return err
		}
		if code := importExit[res.Status]; code != 0 {
			return &exitError{code: code, err: fmt.Errorf("source import %s", res.Status)}
		}
		return nil
	})
}

// readUpTo reads at most n bytes of a regular file (localfile.Read: a
// named pipe is refused, not waited on).
func readUpTo(path string, n int64) ([]byte, error) {
	b, err := localfile.Read(path, n)
	if int64(len(b)) > n {
		b = b[:n]
	}
	return b, err
}
