package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/app"
	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// approveLine is the JSON line of `upcheck approve`: the approval as
// stored.
type approveLine struct {
	Code    string    `json:"code"`
	Version string    `json:"version"`
	Digest  string    `json:"digest"`
	Reason  string    `json:"reason"`
	By      string    `json:"by"`
	At      time.Time `json:"at"`
}

// runApprove is `upcheck approve CODE VERSION --reason R [--site NAME]`:
// the detail page's approval of what an update of the site's component
// (the local site's by default) brings (docs/policy.md "Approvals"), by
// the command line (readmodel.ActorCLI), audited and applied at once.
// It prints the approval as one JSON line; a refusal is said in words on
// stderr (exit 8, as a refused skip).
func runApprove(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	code, version, reason, siteName, err := versionReasonArgs("approve", args, stderr,
		"why what this version brings is approved (required; kept in the audit log)", approveMissing)
	if err != nil {
		return err
	}
	return withApp(ctx, cfg, logger, func(a *app.App) error {
		site, err := cliSite(ctx, a, cfg, siteName)
		if err != nil {
			return fmt.Errorf("approve: %w", err)
		}
		ap, err := updatecheck.NewApprovals(a.Checker).Approve(ctx,
			updatecheck.ApproveRequest{Site: site.ID, Code: code, Version: version, Reason: reason, By: readmodel.ActorCLI})
		switch {
		case errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("approve: %s", noComponentText(site, code))
		case err != nil:
			r := updatecheck.ApprovalRefusalOf(err)
			if r == "" {
				return err
			}
			fmt.Fprintf(stderr, "upcheck approve: refused: %s of %s: %s\n", version, code,
				readmodel.ApprovalRefusalText(r, version, store.MaxReasonLength))
			return &exitError{code: skipRefusedExit, err: errors.New("approve refused")}
		}
		return json.NewEncoder(stdout).Encode(approveLine{Code: code, Version: ap.Version, Digest: ap.Digest, Reason: ap.Reason,
			By: readmodel.SkippedByText(ap.By, ap.FromManifest), At: ap.At})
	})
}

// approveMissing names what `upcheck approve CODE VERSION --reason R`
// lacks, in one line ("" when nothing).
func approveMissing(pos []string, reason string) string {
	switch {
	case len(pos) == 0:
		return "CODE and VERSION are required: the component and the version whose install scripts and sources are approved"
	case len(pos) == 1:
		return "VERSION is required: the version of " + pos[0] + " to approve"
	case len(pos) > 2:
		return "unexpected argument " + strconv.Quote(pos[2]) + ": CODE VERSION --reason R"
	case strings.TrimSpace(reason) == "":
		return "--reason R is required: why what " + pos[1] + " brings is approved (kept in the audit log)"
	}
	return ""
}
