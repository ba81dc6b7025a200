package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/db"
)

// AuditEntry is one row of the audit log. UserID is 0 when no user acted (or
// the user was deleted since); Detail is JSON.
type AuditEntry struct {
	ID     int64
	At     time.Time
	UserID int64
	Action string
	Detail []byte
}

// AuditAppend records an action. userID 0 means no user; detail is encoded
// as JSON (nil: an empty object; a json.RawMessage is stored as is).
func (s *Store) AuditAppend(ctx context.Context, userID int64, action string, detail any) error {
	return auditAppend(ctx, s.q, s.pool, userID, action, detail)
}

// AuditAppend records an action in the transaction, so that it commits or
// rolls back with the change it describes; see Store.AuditAppend.
func (t *Tx) AuditAppend(ctx context.Context, userID int64, action string, detail any) error {
	return auditAppend(ctx, t.q, t.tx, userID, action, detail)
}

func auditAppend(ctx context.Context, q *db.Queries, dbtx db.DBTX, userID int64, action string, detail any) error {
	b := []byte("{}")
	if detail != nil {
		var err error
		if b, err = json.Marshal(detail); err != nil {
			return fmt.Errorf("audit %s: encode detail: %w", action, err)
		}
	}
	if _, err := q.AuditAppend(ctx, dbtx, db.AuditAppendParams{UserID: optionalID(userID), Action: action, Detail: b}); err != nil {
		return mapError(fmt.Errorf("audit %s: %w", action, err))
	}
	return nil
}

// AuditList returns the newest limit entries, newest first.
func (s *Store) AuditList(ctx context.Context, limit int) ([]AuditEntry, error) {
	rows, err := s.q.AuditList(ctx, s.pool, int32(limit))
	if err != nil {
		return nil, mapError(fmt.Errorf("list audit log: %w", err))
	}
	out := make([]AuditEntry, len(rows))
	for i, r := range rows {
		out[i] = AuditEntry{ID: r.ID, At: r.At, Action: r.Action, Detail: r.Detail}
		if r.UserID != nil {
			out[i].UserID = *r.UserID
		}
	}
	return out, nil
}

// optionalID maps the id 0 ("nobody") to NULL.
func optionalID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}
