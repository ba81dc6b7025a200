package store

import (
	"context"
	"fmt"

	"github.com/upcheck/upcheck/internal/db"
)

// Audit actions written by this package.
const (
	AuditAdvisoryDismiss   = "advisory.dismiss"
	AuditAdvisoryUndismiss = "advisory.undismiss"
)

// DismissAdvisory hides an advisory of a component, and records who did it
// in the audit log in the same transaction, so that no dismissal exists
// without its audit row. Dismissing an already dismissed advisory changes
// nothing and is not audited again. userID 0: no user (a script).
func (s *Store) DismissAdvisory(ctx context.Context, code, advisoryID string, userID int64) error {
	return s.WithTx(ctx, func(tx *Tx) error {
		n, err := tx.q.AdvisoryDismiss(ctx, tx.tx, db.AdvisoryDismissParams{
			ComponentCode: code, AdvisoryID: advisoryID, UserID: optionalID(userID),
		})
		if err != nil {
			return fmt.Errorf("dismiss advisory: %w", err)
		}
		if n == 0 {
			return nil
		}
		return tx.AuditAppend(ctx, userID, AuditAdvisoryDismiss, map[string]string{"component": code, "advisory": advisoryID})
	})
}

// UndismissAdvisory shows a dismissed advisory again, audited in the same
// transaction. An advisory that is not dismissed is left alone, unaudited.
func (s *Store) UndismissAdvisory(ctx context.Context, code, advisoryID string, userID int64) error {
	return s.WithTx(ctx, func(tx *Tx) error {
		n, err := tx.q.AdvisoryUndismiss(ctx, tx.tx, db.AdvisoryUndismissParams{ComponentCode: code, AdvisoryID: advisoryID})
		if err != nil {
			return fmt.Errorf("undismiss advisory: %w", err)
		}
		if n == 0 {
			return nil
		}
		return tx.AuditAppend(ctx, userID, AuditAdvisoryUndismiss, map[string]string{"component": code, "advisory": advisoryID})
	})
}

// DismissalsFor returns the dismissed advisories of every component:
// component code -> advisory id -> true. Components without dismissals are
// absent; indexing the nil inner map of an absent code reads false.
func (s *Store) DismissalsFor(ctx context.Context) (map[string]map[string]bool, error) {
	rows, err := s.q.AdvisoryDismissalList(ctx, s.pool)
	if err != nil {
		return nil, mapError(fmt.Errorf("list dismissals: %w", err))
	}
	out := make(map[string]map[string]bool)
	for _, r := range rows {
		if out[r.ComponentCode] == nil {
			out[r.ComponentCode] = make(map[string]bool)
		}
		out[r.ComponentCode][r.AdvisoryID] = true
	}
	return out, nil
}
