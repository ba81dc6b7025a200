package store

import (
	"context"
	"fmt"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// auditSiteAppend is AuditAppend of an action on site's component: a
// registered site's row names the site ("site": its name), so that the
// audit log tells one site's skip, approval or dismissal from another's;
// the local site's rows are as they were before sites.
func (e *Executor) auditSiteAppend(ctx context.Context, userID int64, action readmodel.AuditAction, site int64, detail map[string]any) error {
	if site != LocalSite {
		name, err := e.q.SiteNameOf(ctx, e.dbtx, site)
		if err != nil {
			return mapError(fmt.Errorf("audit %s: the site's name: %w", action, err))
		}
		detail["site"] = name
	}
	return e.AuditAppend(ctx, userID, action, detail)
}
