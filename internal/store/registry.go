package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/db"
)

// RegistryKeys are the signing keys pinned for one npm registry.
type RegistryKeys struct {
	Registry string
	// Keys is the registry's keys document as it published them (JSON),
	// KeyIDs their ids, sorted.
	Keys        []byte
	KeyIDs      []string
	FirstSeenAt time.Time
	// ChangedAt is when they last changed after first sight; nil: never.
	ChangedAt *time.Time
}

// RegistryKeys returns the keys pinned per registry, by registry URL.
func (e *Executor) RegistryKeys(ctx context.Context) (map[string]RegistryKeys, error) {
	rows, err := e.q.RegistryKeysList(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(fmt.Errorf("list registry keys: %w", err))
	}
	out := make(map[string]RegistryKeys, len(rows))
	for _, r := range rows {
		out[r.Registry] = RegistryKeys{Registry: r.Registry, Keys: r.Keys, KeyIDs: r.KeyIds, FirstSeenAt: r.FirstSeenAt, ChangedAt: r.ChangedAt}
	}
	return out, nil
}

// RegistryKeysSave pins a registry's keys, in the fenced transaction that
// writes the first of its sources: on first sight, or when the registry
// publishes other keys (their change time is then now).
func (t *Tx) RegistryKeysSave(ctx context.Context, registry string, keys []byte, ids []string, epoch int64) error {
	err := t.q.RegistryKeysSave(ctx, t.tx, db.RegistryKeysSaveParams{Registry: registry, Keys: keys, KeyIds: orNoStrings(ids), Epoch: epoch})
	return mapError(err)
}

// EventPlanRegistryKeys queues, in the transaction, a registry_keys.changed
// event for the registry whose keys just changed from oldIDs; once per
// change.
func (t *Tx) EventPlanRegistryKeys(ctx context.Context, registry string, oldIDs []string, epoch int64) ([]uuid.UUID, error) {
	p := db.EventPlanRegistryKeysParams{Registry: registry, OldKeyIds: orNoStrings(oldIDs)}
	if epoch != 0 {
		p.Epoch = &epoch
	}
	ids, err := t.q.EventPlanRegistryKeys(ctx, t.tx, p)
	return ids, mapError(err)
}
