package store

import "context"

// TestExec runs a raw statement in the transaction. It exists for tests that
// need to observe a fenced write of their own (a marker row); production code
// writes only through the named methods backed by queries/.
func (t *Tx) TestExec(ctx context.Context, sql string, args ...any) error {
	_, err := t.tx.Exec(ctx, sql, args...)
	return err
}
