package auth

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// PushTokenPrefix starts every site's push token ("ups_…"), so that a
// leaked one is recognisable, and told from an API token ("upc_…").
const PushTokenPrefix = "ups_"

// Audit actions of sites (readmodel): site.push is the push endpoint's.
const (
	AuditSiteAdd    = readmodel.AuditSiteAdd
	AuditSiteRotate = readmodel.AuditSiteRotate
	AuditSiteRemove = readmodel.AuditSiteRemove
	AuditSitePush   = readmodel.AuditSitePush
	AuditUserSites  = readmodel.AuditUserSites
)

// maxOwnerChars bounds a site's owner, as sites.owner's CHECK does.
const maxOwnerChars = 200

// siteName is sites.name's CHECK (migrations/00019_sites.sql).
var siteName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

var (
	// ErrInvalidSiteName refuses a site name sites.name would not hold.
	ErrInvalidSiteName = errors.New("a site's name is 1 to 63 lower-case letters, digits and inner hyphens")
	// ErrInvalidSiteOwner refuses an owner over 200 characters or with
	// control characters.
	ErrInvalidSiteOwner = errors.New("a site's owner is at most 200 characters, without control characters")
	// ErrLocalSite refuses what cannot be done to the site upcheck runs
	// beside: it has no push token to rotate and cannot be removed.
	ErrLocalSite = errors.New("the local site (the one upcheck runs beside) has no push token and cannot be removed")
	// ErrUnknownSite names a site that is not registered.
	ErrUnknownSite = errors.New("no such site")
	// ErrSitesBeyondOwner refuses an API token limited to a site its
	// owner may not see.
	ErrSitesBeyondOwner = errors.New("a token can be limited only to sites its owner may see")
	// ErrNoSites refuses a limit to no site at all: it would see nothing.
	ErrNoSites = errors.New("name at least one site")
)

// ValidSiteName reports whether name can be a site's.
func ValidSiteName(name string) bool { return siteName.MatchString(name) }

// AddSite registers a site and returns its push token and what was
// stored; only the token's SHA-256 is kept, so this is the one time it
// can be shown. A taken name is store.ErrConflict. The audit row names
// who acted (the principal in ctx; nobody from the command line).
func (s *Service) AddSite(ctx context.Context, name, owner string) (string, store.Site, error) {
	name, owner = strings.TrimSpace(name), strings.TrimSpace(owner)
	if !ValidSiteName(name) {
		return "", store.Site{}, fmt.Errorf("%w: %q", ErrInvalidSiteName, name)
	}
	if utf8.RuneCountInString(owner) > maxOwnerChars || !utf8.ValidString(owner) || strings.ContainsFunc(owner, unicode.IsControl) {
		return "", store.Site{}, ErrInvalidSiteOwner
	}
	raw, hash := newToken(PushTokenPrefix)
	var site store.Site
	err := s.st.WithTx(ctx, func(tx *store.Tx) error {
		var err error
		if site, err = tx.SiteCreate(ctx, name, owner, hash); err != nil {
			return err
		}
		return tx.AuditAppend(ctx, actor(ctx), AuditSiteAdd, map[string]any{"site_id": site.ID, "site": site.Name, "owner": site.Owner})
	})
	if err != nil {
		return "", store.Site{}, dbError("add site", err)
	}
	s.logger.InfoContext(ctx, "site added", "site", site.Name, "site_id", site.ID, "by", actor(ctx))
	return raw, site, nil
}

// RotateSiteToken gives a registered site a new push token and returns
// it, shown this once; the old one stops working when this returns.
// ErrLocalSite for the local site, store.ErrNotFound for no such site.
func (s *Service) RotateSiteToken(ctx context.Context, name string) (string, store.Site, error) {
	name = strings.TrimSpace(name)
	if name == store.LocalSiteName {
		return "", store.Site{}, ErrLocalSite
	}
	raw, hash := newToken(PushTokenPrefix)
	var site store.Site
	err := s.st.WithTx(ctx, func(tx *store.Tx) error {
		var err error
		if site, err = tx.SiteRotateToken(ctx, name, hash); err != nil {
			return err
		}
		return tx.AuditAppend(ctx, actor(ctx), AuditSiteRotate, map[string]any{"site_id": site.ID, "site": site.Name})
	})
	if err != nil {
		return "", store.Site{}, dbError("rotate site token", err)
	}
	s.logger.InfoContext(ctx, "site push token rotated", "site", site.Name, "site_id", site.ID, "by", actor(ctx))
	return raw, site, nil
}

// RemoveSite removes a registered site, its installed tree and history
// with it; its push token stops working. ErrLocalSite for the local site,
// store.ErrNotFound for no such site.
func (s *Service) RemoveSite(ctx context.Context, name string) (store.Site, error) {
	name = strings.TrimSpace(name)
	if name == store.LocalSiteName {
		return store.Site{}, ErrLocalSite
	}
	var site store.Site
	err := s.st.WithTx(ctx, func(tx *store.Tx) error {
		var err error
		if site, err = tx.SiteDelete(ctx, name); err != nil {
			return err
		}
		return tx.AuditAppend(ctx, actor(ctx), AuditSiteRemove, map[string]any{"site_id": site.ID, "site": site.Name, "owner": site.Owner})
	})
	if err != nil {
		return store.Site{}, dbError("remove site", err)
	}
	// A principal limited to it keeps a stale id on the other instances
	// for at most PrincipalCacheTTL: the id names no site any more.
	s.logger.InfoContext(ctx, "site removed", "site", site.Name, "site_id", site.ID, "by", actor(ctx))
	return site, nil
}

// AuthenticatePush returns the site a push token is for (the push
// endpoint compares it with the site of the URL). ErrUnauthenticated when
// the token is malformed or no site has it (never made, rotated away, its
// site removed); ErrUnavailable when the database could not tell. The
// token is checked for shape and hashed here, and its hash looked up in a
// unique index (store.SiteByPushToken): nothing compares the secret byte
// by byte.
func (s *Service) AuthenticatePush(ctx context.Context, raw string) (store.Site, error) {
	hash, ok := tokenHash(raw, PushTokenPrefix)
	if !ok {
		return store.Site{}, ErrUnauthenticated
	}
	site, err := s.st.SiteByPushToken(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return store.Site{}, ErrUnauthenticated
	}
	if err != nil {
		return store.Site{}, dbError("authenticate push token", err)
	}
	return site, nil
}

// siteIDs resolves site names (trimmed, without duplicates) to ids;
// ErrNoSites for none, ErrUnknownSite naming the first that is not
// registered.
func (s *Service) siteIDs(ctx context.Context, names []string) ([]int64, error) {
	var clean []string
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(clean, n) {
			clean = append(clean, n)
		}
	}
	if len(clean) == 0 {
		return nil, ErrNoSites
	}
	found, err := s.st.SiteIDs(ctx, clean)
	if err != nil {
		return nil, dbError("site ids", err)
	}
	ids := make([]int64, 0, len(clean))
	for _, n := range clean {
		id, ok := found[n]
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownSite, n)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// UserSites is a user's limit in names: Limited with the sites it may see
// (sorted), or every site.
type UserSites struct {
	User    store.User
	Limited bool
	Sites   []string
}

// SetUserSites limits the user with this email to the named sites, or,
// with all, lets them see every site again. ErrUnknownSite names a site
// that is not registered, ErrNoSites refuses an empty list,
// store.ErrNotFound no such user. Their sessions and tokens see the change
// at their next request on this instance, within PrincipalCacheTTL on the
// others. Audited as user.sites.
func (s *Service) SetUserSites(ctx context.Context, email string, all bool, names []string) (UserSites, error) {
	u, err := s.st.UserByEmail(ctx, strings.TrimSpace(email))
	if err != nil {
		return UserSites{}, dbError(fmt.Sprintf("user sites: user %q", email), err)
	}
	var ids []int64
	if !all {
		if ids, err = s.siteIDs(ctx, names); err != nil {
			return UserSites{}, err
		}
	}
	var out UserSites
	err = s.st.WithTx(ctx, func(tx *store.Tx) error {
		if err := tx.UserSetSites(ctx, u.ID, !all, ids); err != nil {
			return err
		}
		limited, sites, err := tx.UserSiteNames(ctx, u.ID)
		if err != nil {
			return err
		}
		out = UserSites{User: u, Limited: limited, Sites: sites}
		detail := map[string]any{"user_id": u.ID, "email": u.Email, "sites": "all"}
		if limited {
			detail["sites"] = strings.Join(sites, ", ")
		}
		return tx.AuditAppend(ctx, actor(ctx), AuditUserSites, detail)
	})
	if err != nil {
		return UserSites{}, dbError("set user sites", err)
	}
	s.cache.drop(func(p Principal) bool { return p.UserID == u.ID })
	s.logger.InfoContext(ctx, "user sites set", "user_id", u.ID, "limited", out.Limited, "sites", strings.Join(out.Sites, ","), "by", actor(ctx))
	return out, nil
}

// UserSiteLimit returns the sites the user with this email may see;
// store.ErrNotFound if there is no such user.
func (s *Service) UserSiteLimit(ctx context.Context, email string) (UserSites, error) {
	u, err := s.st.UserByEmail(ctx, strings.TrimSpace(email))
	if err != nil {
		return UserSites{}, dbError(fmt.Sprintf("user sites: user %q", email), err)
	}
	limited, sites, err := s.st.UserSiteNames(ctx, u.ID)
	if err != nil {
		return UserSites{}, dbError("user sites", err)
	}
	return UserSites{User: u, Limited: limited, Sites: sites}, nil
}

// UsersSites returns every account, by email, with the sites it may see,
// in one query (the Users section).
func (s *Service) UsersSites(ctx context.Context) ([]UserSites, error) {
	rows, err := s.st.UsersWithSites(ctx)
	if err != nil {
		return nil, dbError("users' sites", err)
	}
	out := make([]UserSites, len(rows))
	for i, r := range rows {
		out[i] = UserSites{User: r.User, Limited: r.SitesLimited, Sites: r.SiteNames}
	}
	return out, nil
}

// TokenSites returns the names of the sites each API token limited to
// some is limited to, by token id (a token limited to sites since removed
// has an empty list: it sees none).
func (s *Service) TokenSites(ctx context.Context) (map[int64][]string, error) {
	m, err := s.st.TokenSiteNames(ctx)
	if err != nil {
		return nil, dbError("token sites", err)
	}
	return m, nil
}
