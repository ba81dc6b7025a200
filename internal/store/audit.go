package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// AuditAppend records an action; on a Tx it commits or rolls back with the
// change it describes. userID 0 means no user; detail is encoded as JSON
// (nil: an empty object; a json.RawMessage is stored as is).
func (e *Executor) AuditAppend(ctx context.Context, userID int64, action readmodel.AuditAction, detail any) error {
	b := []byte("{}")
	if detail != nil {
		var err error
		if b, err = json.Marshal(detail); err != nil {
			return fmt.Errorf("audit %s: encode detail: %w", action, err)
		}
	}
	if _, err := e.q.AuditAppend(ctx, e.dbtx, db.AuditAppendParams{UserID: optionalID(userID), Action: string(action), Detail: b}); err != nil {
		return mapError(fmt.Errorf("audit %s: %w", action, err))
	}
	return nil
}

// optionalID maps the id 0 ("nobody") to NULL.
func optionalID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// AuditEventCount counts the entries of a kind ("" for every kind).
func (e *Executor) AuditEventCount(ctx context.Context, kind string) (int, error) {
	n, err := e.q.AuditEventCount(ctx, e.dbtx, kind)
	if err != nil {
		return 0, mapError(fmt.Errorf("count audit events: %w", err))
	}
	return int(n), nil
}

// AuditEvents lists the entries of a kind ("" for every kind), newest
// first, skipping offset; limit 0 lists them all.
// The entries are readmodel.AuditRow, read by the page, its CSV and the API.
func (e *Executor) AuditEvents(ctx context.Context, kind string, limit, offset int) ([]readmodel.AuditRow, error) {
	p := db.AuditEventPageParams{Kind: kind, SkipRows: int32(offset)}
	if limit > 0 {
		n := int32(limit)
		p.MaxRows = &n
	}
	rows, err := e.q.AuditEventPage(ctx, e.dbtx, p)
	if err != nil {
		return nil, mapError(fmt.Errorf("list audit events: %w", err))
	}
	out := make([]readmodel.AuditRow, len(rows))
	for i, r := range rows {
		out[i] = readmodel.AuditRow{At: r.At, Kind: r.Kind, Action: r.Action, Actor: r.Actor, Component: r.Component,
			Advisory: r.Advisory, Reason: r.Reason, ExpiresAt: r.ExpiresAt, Trigger: r.Trigger, Status: r.Status, Detail: r.Detail}
	}
	return out, nil
}
