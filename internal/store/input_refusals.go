package store

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// MaxInputErrorBytes bounds a refusal's stored words
// (input_refusals.error's check): a lockfile's error names a file, a line
// and a field, far less.
const MaxInputErrorBytes = 2000

// InputRefused records that serve refused the input at path for err's
// reason, which names the file, the line and the problem and never a value.
func (e *Executor) InputRefused(ctx context.Context, input readmodel.Input, path, reason string) error {
	err := e.q.InputRefusalRecord(ctx, e.dbtx, db.InputRefusalRecordParams{
		Input: string(input), Path: path, Error: cut(reason, MaxInputErrorBytes),
	})
	return mapError(err)
}

// InputAccepted clears the input's refusal: the components are those the
// input says. accepted is false when none was recorded.
func (e *Executor) InputAccepted(ctx context.Context, input readmodel.Input) (cleared bool, err error) {
	n, err := e.q.InputRefusalClear(ctx, e.dbtx, string(input))
	return n > 0, mapError(err)
}

// InputRefusals lists the inputs refused now, by input.
func (e *Executor) InputRefusals(ctx context.Context) (readmodel.InputRefusals, error) {
	rows, err := e.q.InputRefusalList(ctx, e.dbtx)
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
