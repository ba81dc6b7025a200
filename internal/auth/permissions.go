package auth

import (
	"context"
	"net/http"
	"slices"
)

// Roles, as stored in users.role (docs/design.md section 6).
const (
	RoleAdmin  = "admin"
	RoleViewer = "viewer"
)

// Permissions, named as in docs/design.md; routes ask for these, never for roles.
const (
	PermView   = "plugins.can_view"
	PermManage = "plugins.can_manage"
	// PermTokens is the AdminCP's API tokens section: list every user's
	// tokens, create one for any user, revoke any. Admins only, and kept
	// apart from plugins.can_manage so that a role managing plugins need
	// not hold other people's credentials.
	PermTokens = "tokens.can_manage"
	// PermAudit reads the audit log: who dismissed what, and every check.
	PermAudit = "audit.can_view"
	// PermSites registers sites, rotates their push tokens and removes
	// them (docs/design.md "Many sites"): admins. Every principal lists
	// the sites it may see with plugins.can_view.
	PermSites = "sites.can_manage"
)

// rolePermissions is the whole role model: adding a role or a permission is
// one line here.
var rolePermissions = map[string][]string{
	RoleAdmin:  {PermView, PermManage, PermTokens, PermAudit, PermSites},
	RoleViewer: {PermView},
}

// ViewPermissions are the permissions that only read: all a read-only API
// token keeps of its owner's role. A permission added to the role model is
// kept from read-only tokens until it is listed here.
var ViewPermissions = []string{PermView, PermAudit}

// ValidRole reports whether role is one this installation knows.
func ValidRole(role string) bool {
	_, ok := rolePermissions[role]
	return ok
}

// Permissions lists what a role may do; nil for an unknown role. The slice
// is the caller's to keep.
func Permissions(role string) []string {
	return slices.Clone(rolePermissions[role])
}

// Principal is who a request acts as: a user, through a browser session or
// an API token.
type Principal struct {
	UserID int64
	Email  string
	Role   string
	// ViaToken is set for API-token requests: they carry no cookie, so they
	// need no CSRF token.
	ViaToken bool
	// TokenID is the API token's id when ViaToken.
	TokenID int64
	// ReadOnly is set for a read-only API token: it has only the
	// ViewPermissions of its role, and CheckCSRF refuses its state changes.
	ReadOnly bool
	// SessionID identifies the browser session (hex of the token's hash,
	// never the token itself), for Logout; empty when ViaToken.
	SessionID string
	// CSRFToken is the session's anti-forgery token, rendered into forms
	// and pages; empty when ViaToken.
	CSRFToken string
	// Sites are the sites the principal may see (MaySee); the zero value
	// is every site.
	Sites Sites
}

// MaySee is the one answer to "may this principal see site siteID"
// (docs/design.md "Who sees what"): every page, route, export, metric and
// notification about a site asks it, the local site's included
// (store.LocalSite). Its permissions say what it may do there.
func (p Principal) MaySee(siteID int64) bool { return p.Sites.Has(siteID) }

// Can reports whether the principal's role grants perm, and for a
// read-only token, whether perm is also one of the ViewPermissions.
func (p Principal) Can(perm string) bool {
	if p.ReadOnly && !slices.Contains(ViewPermissions, perm) {
		return false
	}
	return slices.Contains(rolePermissions[p.Role], perm)
}

// ReadOnlyRefuses reports whether the principal lacks perm only because
// its token is read-only (its role has it), so that a refusal can say so.
func (p Principal) ReadOnlyRefuses(perm string) bool {
	return p.ReadOnly && !p.Can(perm) && slices.Contains(rolePermissions[p.Role], perm)
}

// principalKey is where WithPrincipal leaves the Principal in a context.
type principalKey struct{}

// WithPrincipal returns a copy of ctx, a request's context, that carries p
// as the principal the request acts as. The web layer's session and token
// middleware set it on every request they authenticate.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal of the request r holds (an
// echo.Context holds one), if WithPrincipal set one.
func PrincipalFrom(r interface{ Request() *http.Request }) (Principal, bool) {
	return principalFromContext(r.Request().Context())
}

func principalFromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
