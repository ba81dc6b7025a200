package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/upcheck/upcheck/internal/db"
)

// KEVEntry is one entry of the KEV catalogue as stored.
type KEVEntry struct {
	CVE, Vendor, Product, Name string
	DateAdded                  time.Time
	DueDate                    *time.Time
	RequiredAction, Ransomware string
}

// KEVReplace replaces the stored catalogue with entries, writing only what
// differs, and returns the CVEs added, removed or changed.
func (t *Tx) KEVReplace(ctx context.Context, entries []KEVEntry, epoch int64) ([]string, error) {
	p := db.KEVReplaceParams{Epoch: epoch}
	for _, e := range entries {
		p.Cves = append(p.Cves, e.CVE)
		p.Vendors = append(p.Vendors, e.Vendor)
		p.Products = append(p.Products, e.Product)
		p.Names = append(p.Names, e.Name)
		p.DatesAdded = append(p.DatesAdded, pgtype.Date{Time: e.DateAdded, Valid: true})
		due := pgtype.Date{}
		if e.DueDate != nil {
			due = pgtype.Date{Time: *e.DueDate, Valid: true}
		}
		p.DueDates = append(p.DueDates, due)
		p.Actions = append(p.Actions, e.RequiredAction)
		p.Ransomware = append(p.Ransomware, e.Ransomware)
	}
	p.Cves, p.Vendors, p.Products, p.Names = orNoStrings(p.Cves), orNoStrings(p.Vendors), orNoStrings(p.Products), orNoStrings(p.Names)
	p.Actions, p.Ransomware = orNoStrings(p.Actions), orNoStrings(p.Ransomware)
	if p.DatesAdded == nil {
		p.DatesAdded, p.DueDates = []pgtype.Date{}, []pgtype.Date{}
	}
	changed, err := t.q.KEVReplace(ctx, t.tx, p)
	return changed, mapError(err)
}

// KEV reads the stored catalogue by CVE.
func (e *Executor) KEV(ctx context.Context) (map[string]KEVEntry, error) {
	rows, err := e.q.KEVAll(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(err)
	}
	out := make(map[string]KEVEntry, len(rows))
	for _, r := range rows {
		k := KEVEntry{CVE: r.Cve, DateAdded: r.DateAdded.Time, RequiredAction: r.RequiredAction, Ransomware: r.Ransomware}
		if r.DueDate.Valid {
			d := r.DueDate.Time
			k.DueDate = &d
		}
		out[r.Cve] = k
	}
	return out, nil
}

// EPSSScore is one CVE's score.
type EPSSScore struct {
	CVE               string
	Score, Percentile float32
}

// EPSSReplace brings the stored scores to those next yields (streamed into
// a staging table with COPY, never held), writing only the scores that
// differ, and returns the CVEs whose score was added, removed or changed.
// next returns false when there are no more; an error it reports through
// its own means ends the copy (the caller's transaction then rolls back).
func (t *Tx) EPSSReplace(ctx context.Context, next func() (EPSSScore, bool, error)) ([]string, error) {
	if _, err := t.tx.Exec(ctx, `CREATE TEMPORARY TABLE epss_incoming (cve text PRIMARY KEY, epss real NOT NULL, percentile real NOT NULL) ON COMMIT DROP`); err != nil {
		return nil, mapError(fmt.Errorf("stage EPSS scores: %w", err))
	}
	src := &epssRows{next: next}
	if _, err := t.tx.CopyFrom(ctx, pgx.Identifier{"epss_incoming"}, []string{"cve", "epss", "percentile"}, src); err != nil {
		if src.err != nil {
			return nil, src.err
		}
		return nil, mapError(fmt.Errorf("stage EPSS scores: %w", err))
	}
	// The scores that went, then those added or changed, in epssParts
	// statements over parts of the CVEs: each statement stays within the
	// lease transaction's statement limit however many scores change.
	var changed []string
	collect := func(sql string, args ...any) error {
		rows, err := t.tx.Query(ctx, sql, args...)
		if err != nil {
			return mapError(fmt.Errorf("apply EPSS scores: %w", err))
		}
		cves, err := pgx.CollectRows(rows, pgx.RowTo[string])
		changed = append(changed, cves...)
		return mapError(err)
	}
	if err := collect(`DELETE FROM epss_scores s WHERE NOT EXISTS (SELECT 1 FROM epss_incoming i WHERE i.cve = s.cve) RETURNING s.cve`); err != nil {
		return nil, err
	}
	for part := range epssParts {
		err := collect(`
INSERT INTO epss_scores (cve, epss, percentile)
SELECT cve, epss, percentile FROM epss_incoming WHERE (hashtext(cve) & 2147483647) % $1 = $2
ON CONFLICT (cve) DO UPDATE SET epss = EXCLUDED.epss, percentile = EXCLUDED.percentile
WHERE (epss_scores.epss, epss_scores.percentile) IS DISTINCT FROM (EXCLUDED.epss, EXCLUDED.percentile)
RETURNING cve`, epssParts, part)
		if err != nil {
			return nil, err
		}
	}
	return changed, nil
}

// epssParts is how many statements write a day's scores.
const epssParts = 8

// epssRows feeds COPY from next.
type epssRows struct {
	next func() (EPSSScore, bool, error)
	cur  EPSSScore
	err  error
}

func (r *epssRows) Next() bool {
	s, ok, err := r.next()
	if err != nil {
		r.err = err
		return false
	}
	r.cur = s
	return ok
}

func (r *epssRows) Values() ([]any, error) {
	return []any{r.cur.CVE, r.cur.Score, r.cur.Percentile}, nil
}
func (r *epssRows) Err() error { return r.err }

// EPSS reads the stored scores by CVE.
func (e *Executor) EPSS(ctx context.Context) (map[string]EPSSScore, error) {
	rows, err := e.q.EPSSAll(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(err)
	}
	out := make(map[string]EPSSScore, len(rows))
	for _, r := range rows {
		out[r.Cve] = EPSSScore{CVE: r.Cve, Score: r.Epss, Percentile: r.Percentile}
	}
	return out, nil
}

// EPSSCount is how many scores are stored.
func (e *Executor) EPSSCount(ctx context.Context) (int, error) {
	n, err := e.q.EPSSCount(ctx, e.dbtx)
	return int(n), mapError(err)
}

// IntelKnownCVEs returns the CVEs the stored advisories name (OSV
// records' ids and aliases, the current results' advisories).
func (e *Executor) IntelKnownCVEs(ctx context.Context) (map[string]bool, error) {
	rows, err := e.q.IntelKnownCVEs(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(err)
	}
	out := make(map[string]bool, len(rows))
	for _, c := range rows {
		out[c] = true
	}
	return out, nil
}
