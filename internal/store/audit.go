package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

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

// AuditEvent is one entry of the Audit log page: an audit_log row, a
// dismissal whose expiry passed while it stood, or a check.
type AuditEvent struct {
	At time.Time
	// Kind is a readmodel.AuditKind.
	Kind string
	// Action is the audit action (advisory.dismiss, advisory.undismiss,
	// advisory.expire, user.create, …) or "check".
	Action string
	// Actor is who acted: an email, "cron" or "cli" for checks; "" when
	// nobody did (an expiry, a command-line account change).
	Actor               string
	Component, Advisory string
	Reason              string
	ExpiresAt           *time.Time
	// Trigger and Status are a check's.
	Trigger, Status string
	// Detail is the entry's JSON: the audit row's own, a check's counts.
	Detail []byte
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
func (e *Executor) AuditEvents(ctx context.Context, kind string, limit, offset int) ([]AuditEvent, error) {
	p := db.AuditEventPageParams{Kind: kind, SkipRows: int32(offset)}
	if limit > 0 {
		n := int32(limit)
		p.MaxRows = &n
	}
	rows, err := e.q.AuditEventPage(ctx, e.dbtx, p)
	if err != nil {
		return nil, mapError(fmt.Errorf("list audit events: %w", err))
	}
	out := make([]AuditEvent, len(rows))
	for i, r := range rows {
		out[i] = AuditEvent{At: r.At, Kind: r.Kind, Action: r.Action, Actor: r.Actor, Component: r.Component,
			Advisory: r.Advisory, Reason: r.Reason, ExpiresAt: r.ExpiresAt, Trigger: r.Trigger, Status: r.Status, Detail: r.Detail}
	}
	return out, nil
}
