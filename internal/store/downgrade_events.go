package store

import (
	"context"

	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/db"
)

// EventPlanPinDowngrade queues, in the transaction, the trust_downgrade
// event of a manifest sync that lowered the trust of the source at url for
// site's components codes (PinDowngradePut, earlier in the same
// transaction): once per channel and downgrade.
func (t *Tx) EventPlanPinDowngrade(ctx context.Context, site int64, url string, codes []string) ([]uuid.UUID, error) {
	ids, err := t.q.EventPlanPinDowngrade(ctx, t.tx, db.EventPlanPinDowngradeParams{Site: site, SourceUrl: url,
		Codes: orNoStrings(codes)})
	return ids, mapError(err)
}
