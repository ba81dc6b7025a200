package store

import (
	"context"
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/db"
)

// SourceTrust is the stored trust of a source (table source_trust): the keys
// a key statement endorsed under the pin Pin, and when the statement was
// last looked at. It applies only while Pin is the pin of the source's
// components; otherwise the pin's own keys are trusted.
type SourceTrust struct {
	URL                string
	Pin                string // the pin the row belongs to (canonical text)
	Keys               string // the endorsed set (canonical text); "": the pin's own
	Version            int64  // the last statement version accepted under Pin
	Statement          []byte // its body and signature set, when Changed
	StatementSignature string
	Changed            bool       // Keys or Version changed in this write
	CheckedAt          *time.Time // when the statement was last fetched
	Epoch              int64
}

// SourceTrusts returns the stored trust of every source, by URL.
func (e *Executor) SourceTrusts(ctx context.Context) (map[string]SourceTrust, error) {
	rows, err := e.q.SourceTrustList(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(fmt.Errorf("list source trust: %w", err))
	}
	out := make(map[string]SourceTrust, len(rows))
	for _, r := range rows {
		out[r.Url] = SourceTrust{URL: r.Url, Pin: r.Pin, Keys: deref(r.Keys), Version: r.Version, CheckedAt: r.CheckedAt}
	}
	return out, nil
}

// SourceTrust returns the stored trust of one source; the zero value when
// none is stored.
func (e *Executor) SourceTrust(ctx context.Context, url string) (SourceTrust, error) {
	rows, err := e.q.SourceTrustGet(ctx, e.dbtx, url)
	if err != nil || len(rows) == 0 {
		return SourceTrust{}, mapError(err)
	}
	r := rows[0]
	return SourceTrust{URL: r.Url, Pin: r.Pin, Keys: deref(r.Keys), Version: r.Version, CheckedAt: r.CheckedAt}, nil
}

func trustParams(t SourceTrust) db.SourceTrustSaveParams {
	return db.SourceTrustSaveParams{Url: t.URL, Pin: t.Pin, Keys: ref(t.Keys), Version: t.Version, Statement: t.Statement,
		StatementSignature: ref(t.StatementSignature), Changed: t.Changed, CheckedAt: t.CheckedAt, Epoch: t.Epoch}
}

// SourceTrustSave stores a source's trust; its source row must have been
// written before, in the same transaction.
func (t *Tx) SourceTrustSave(ctx context.Context, st SourceTrust) error {
	return mapError(t.q.SourceTrustSave(ctx, t.tx, trustParams(st)))
}

// SourceTrustSave is Tx.SourceTrustSave in the batch, after the source's row.
func (b *Batch) SourceTrustSave(st SourceTrust) {
	b.add(recordOne(func(r *recorder) {
		_ = db.New().SourceTrustSave(context.Background(), r, trustParams(st))
	}))
}
