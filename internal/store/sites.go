package store

import (
	"context"
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/db"
)

// The site upcheck runs beside (docs/design.md "Many sites"): sites.id 1,
// always there, whose components and tree come from upcheck's own
// configuration (the lockfile of its own configuration is read into its
// tree; the pages and routes outside /sites/… and /api/sites/… read it).
// It has no push token and cannot be removed.
const (
	LocalSite     int64 = 1
	LocalSiteName       = "local"
)

// Site is a row of sites; its push token's hash stays in the database.
type Site struct {
	ID int64
	// Name is in URLs and on the command line: lower-case letters, digits
	// and inner hyphens, at most 63.
	Name string
	// Owner is who the site is for, as the operator typed it; "" if not
	// said.
	Owner     string
	CreatedAt time.Time
	// TokenMadeAt is when the push token was made (added or rotated); nil
	// for the local site.
	TokenMadeAt *time.Time
	// PushedAt is the last push accepted, on the database clock; nil: the
	// site never pushed (the local site never does).
	PushedAt *time.Time
	// Stale is set, by the reads that take a stale-after setting, for a
	// registered site whose last push (or registration, before its first)
	// is older than the setting; never for the local site.
	Stale bool
}

// Local reports whether s is the site upcheck runs beside.
func (s Site) Local() bool { return s.ID == LocalSite }

// SiteLimit is whether a user or an API token is limited to some sites
// (users.sites_limited, api_tokens.sites_limited), and to which (the ids
// in user_sites, token_sites). The zero value is not limited.
type SiteLimit struct {
	Limited bool
	IDs     []int64
}

// siteRow is the shape of the queries that return a site without its
// staleness.
type siteRow db.SiteCreateRow

func (r siteRow) site() Site {
	return Site{ID: r.ID, Name: r.Name, Owner: r.Owner, CreatedAt: r.CreatedAt, TokenMadeAt: r.TokenMadeAt, PushedAt: r.PushedAt}
}

// SiteCreate registers a site with the SHA-256 of its push token;
// ErrConflict when the name is taken (or, against all odds, the hash).
func (e *Executor) SiteCreate(ctx context.Context, name, owner string, tokenHash []byte) (Site, error) {
	r, err := e.q.SiteCreate(ctx, e.dbtx, db.SiteCreateParams{Name: name, Owner: owner, TokenHash: tokenHash})
	if err != nil {
		return Site{}, mapAuthError(fmt.Errorf("create site %q: %w", name, err))
	}
	return siteRow(r).site(), nil
}

// Sites lists every site, the local one first, then by name; Stale is
// judged on the database clock against staleAfter.
func (e *Executor) Sites(ctx context.Context, staleAfter time.Duration) ([]Site, error) {
	rows, err := e.q.SiteList(ctx, e.dbtx, staleAfter.Seconds())
	if err != nil {
		return nil, mapError(fmt.Errorf("list sites: %w", err))
	}
	out := make([]Site, len(rows))
	for i, r := range rows {
		out[i] = Site{ID: r.ID, Name: r.Name, Owner: r.Owner, CreatedAt: r.CreatedAt, TokenMadeAt: r.TokenMadeAt,
			PushedAt: r.PushedAt, Stale: r.Stale}
	}
	return out, nil
}

// SiteChoice is a site as the site switcher names it.
type SiteChoice struct {
	ID   int64
	Name string
}

// SiteChoices returns the sites of scope the switcher offers: the local
// one first (when in scope), then the first max registered ones by name.
func (e *Executor) SiteChoices(ctx context.Context, scope FleetScope, max int) ([]SiteChoice, error) {
	rows, err := e.q.SiteChoices(ctx, e.dbtx, db.SiteChoicesParams{Limited: scope.Limited, Ids: scope.ids(), MaxRows: int32(max)})
	if err != nil {
		return nil, mapError(fmt.Errorf("list the switcher's sites: %w", err))
	}
	out := make([]SiteChoice, len(rows))
	for i, r := range rows {
		out[i] = SiteChoice{ID: r.ID, Name: r.Name}
	}
	return out, nil
}

// SiteByName returns the site with this name, Stale judged against
// staleAfter; ErrNotFound if there is none.
func (e *Executor) SiteByName(ctx context.Context, name string, staleAfter time.Duration) (Site, error) {
	r, err := e.q.SiteGetByName(ctx, e.dbtx, db.SiteGetByNameParams{Name: name, StaleSeconds: staleAfter.Seconds()})
	if err != nil {
		return Site{}, mapError(fmt.Errorf("get site %q: %w", name, err))
	}
	return Site{ID: r.ID, Name: r.Name, Owner: r.Owner, CreatedAt: r.CreatedAt, TokenMadeAt: r.TokenMadeAt,
		PushedAt: r.PushedAt, Stale: r.Stale}, nil
}

// SiteByPushToken returns the site whose push token has this SHA-256;
// ErrNotFound if none has (a token never made, rotated away, or of a
// removed site). The secret is never compared in Go: its hash is looked
// up in a unique index, as API tokens are (auth.Service.AuthenticatePush
// checks a presented token's shape and hashes it).
func (e *Executor) SiteByPushToken(ctx context.Context, tokenHash []byte) (Site, error) {
	r, err := e.q.SiteGetByTokenHash(ctx, e.dbtx, tokenHash)
	if err != nil {
		return Site{}, mapError(fmt.Errorf("get site by push token: %w", err))
	}
	return siteRow(r).site(), nil
}

// SiteIDs returns the ids of the named sites, by name; names that are no
// site are missing from it.
func (e *Executor) SiteIDs(ctx context.Context, names []string) (map[string]int64, error) {
	rows, err := e.q.SiteIDsByName(ctx, e.dbtx, names)
	if err != nil {
		return nil, mapError(fmt.Errorf("site ids: %w", err))
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.Name] = r.ID
	}
	return out, nil
}

// SiteRotateToken gives a registered site a new push token by its
// SHA-256; the old one stops working when the transaction commits.
// ErrNotFound if there is no registered site of that name (the local site
// has no token).
func (e *Executor) SiteRotateToken(ctx context.Context, name string, tokenHash []byte) (Site, error) {
	r, err := e.q.SiteRotateToken(ctx, e.dbtx, db.SiteRotateTokenParams{Name: name, TokenHash: tokenHash})
	if err != nil {
		return Site{}, mapAuthError(fmt.Errorf("rotate push token of site %q: %w", name, err))
	}
	return siteRow(r).site(), nil
}

// SiteDelete removes a registered site, its installed tree and history
// with it; ErrNotFound if there is no registered site of that name (the
// local site is never removed).
func (e *Executor) SiteDelete(ctx context.Context, name string) (Site, error) {
	r, err := e.q.SiteDelete(ctx, e.dbtx, name)
	if err != nil {
		return Site{}, mapError(fmt.Errorf("remove site %q: %w", name, err))
	}
	return siteRow(r).site(), nil
}

// UserSetSites limits a user to the sites siteIDs (limited), or lets them
// see every site (not limited: siteIDs is ignored). ErrNotFound if there
// is no such user. Three statements: run it in a transaction.
func (e *Executor) UserSetSites(ctx context.Context, userID int64, limited bool, siteIDs []int64) error {
	n, err := e.q.UserSetSitesLimited(ctx, e.dbtx, db.UserSetSitesLimitedParams{ID: userID, SitesLimited: limited})
	if err := affectedOne(n, err, "set user sites"); err != nil {
		return err
	}
	if err := e.q.UserSitesClear(ctx, e.dbtx, userID); err != nil {
		return mapError(fmt.Errorf("clear user sites: %w", err))
	}
	if !limited || len(siteIDs) == 0 {
		return nil
	}
	if err := e.q.UserSitesAdd(ctx, e.dbtx, db.UserSitesAddParams{UserID: userID, SiteIds: siteIDs}); err != nil {
		return mapError(fmt.Errorf("add user sites: %w", err))
	}
	return nil
}

// UserSiteNames returns whether a user is limited to some sites, and the
// names of those sites; ErrNotFound if there is no such user.
func (e *Executor) UserSiteNames(ctx context.Context, userID int64) (limited bool, names []string, err error) {
	r, err := e.q.UserSites(ctx, e.dbtx, userID)
	if err != nil {
		return false, nil, mapError(fmt.Errorf("user sites: %w", err))
	}
	return r.SitesLimited, r.SiteNames, nil
}

// TokenSetSites limits a new API token to the sites siteIDs (which the
// caller found within its owner's).
func (e *Executor) TokenSetSites(ctx context.Context, tokenID int64, siteIDs []int64) error {
	if err := e.q.TokenSitesSet(ctx, e.dbtx, db.TokenSitesSetParams{TokenID: tokenID, SiteIds: siteIDs}); err != nil {
		return mapError(fmt.Errorf("set token sites: %w", err))
	}
	return nil
}

// TokenSiteNames returns, for every API token limited to some sites, the
// names of those sites, by token id.
func (e *Executor) TokenSiteNames(ctx context.Context) (map[int64][]string, error) {
	rows, err := e.q.TokenSiteNames(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(fmt.Errorf("token sites: %w", err))
	}
	out := map[int64][]string{}
	for _, r := range rows {
		out[r.TokenID] = append(out[r.TokenID], r.Name)
	}
	return out, nil
}
