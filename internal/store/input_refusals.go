package store

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// MaxInputErrorBytes bounds a refusal's stored words
// (input_refusals.error's check): a lockfile's error names a file, a line
// and a field, far less.
const MaxInputErrorBytes = 2000

// InputRefused records that serve refused the local site's input at path
// for err's reason, which names the file, the line and the problem and
// never a value.
func (e *Executor) InputRefused(ctx context.Context, input readmodel.Input, path, reason string) error {
	return e.inputRefused(ctx, LocalSite, input, path, reason, nil)
}

// PushRefused records that a registered site's push of the lockfile
// named file was refused for reason (the push's 422 words): the site's
// lockfile refusal, one row however often it is refused, which the
// site's next accepted push removes (Tx.SitePushed). pushedBefore is the
// site's last push accepted when the refused one began (Site.PushedAt):
// when another was accepted since, it stands and nothing is recorded.
func (e *Executor) PushRefused(ctx context.Context, site int64, pushedBefore *time.Time, file, reason string) error {
	return e.inputRefused(ctx, site, readmodel.InputLockfile, file, reason, pushedBefore)
}

func (e *Executor) inputRefused(ctx context.Context, site int64, input readmodel.Input, path, reason string, pushedBefore *time.Time) error {
	err := e.q.InputRefusalRecord(ctx, e.dbtx, db.InputRefusalRecordParams{
		SiteID: site, Input: string(input), Path: path, Error: cut(reason, MaxInputErrorBytes), PushedBefore: pushedBefore,
	})
	return mapError(err)
}

// InputAccepted clears the local site's input's refusal: the components
// are those the input says. accepted is false when none was recorded.
func (e *Executor) InputAccepted(ctx context.Context, input readmodel.Input) (cleared bool, err error) {
	n, err := e.q.InputRefusalClear(ctx, e.dbtx, db.InputRefusalClearParams{SiteID: LocalSite, Input: string(input)})
	return n > 0, mapError(err)
}

// InputRefusals lists the local site's inputs refused now, by input.
func (e *Executor) InputRefusals(ctx context.Context) (readmodel.InputRefusals, error) {
	return e.inputRefusals(ctx, LocalSite)
}

// PushRefusal is a registered site's refused push that stands (its
// lockfile's refusal), nil when its last push was accepted or it was
// never refused.
func (e *Executor) PushRefusal(ctx context.Context, site int64) (*readmodel.InputRefusal, error) {
	rs, err := e.inputRefusals(ctx, site)
	for _, r := range rs {
		if r.Input == readmodel.InputLockfile {
			return &r, nil
		}
	}
	return nil, err
}

func (e *Executor) inputRefusals(ctx context.Context, site int64) (readmodel.InputRefusals, error) {
	rows, err := e.q.InputRefusalList(ctx, e.dbtx, site)
	if err != nil {
		return nil, mapError(fmt.Errorf("read refused inputs: %w", err))
	}
	out := make(readmodel.InputRefusals, len(rows))
	for i, r := range rows {
		out[i] = readmodel.InputRefusal{Input: readmodel.Input(r.Input), Path: r.Path, Error: r.Error,
			Since: r.Since.UTC(), RefusedAt: r.RefusedAt.UTC()}
	}
	return out, nil
}

// cut is s as PostgreSQL text can hold it (valid UTF-8, no NUL) within n
// bytes, cut at a character and marked with an ellipsis when it was cut.
func cut(s string, n int) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
	if len(s) <= n {
		return s
	}
	const more = "…"
	s = s[:n-len(more)]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + more
}
