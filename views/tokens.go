package views

import (
	"strconv"
	"strings"
	"time"
)

// PathTokens is the API tokens section of the AdminCP (tokens.can_manage):
// every user's tokens, a form to create one, a revoke button on each.
const PathTokens = "/admin/tokens"

// NavTokens is the navigation entry of the API tokens section.
const NavTokens NavItem = "tokens"

// TokenRevokePath is the revocation of token id: a GET asks for
// confirmation (views.Confirm), whose form POSTs there with confirmed=yes.
func TokenRevokePath(id int64) string {
	return PathTokens + "/" + strconv.FormatInt(id, 10) + "/revoke"
}

// TokenLifetimes are the form's expiry choices, in order: the value is
// what auth.ParseTokenLifetime reads. DefaultTokenLifetime is preselected:
// a token that is forgotten stops on its own.
var TokenLifetimes = []struct{ Value, Label string }{
	{"30d", "in 30 days"},
	{"90d", "in 90 days"},
	{"1y", "in 1 year"},
	{"never", "never (until revoked)"},
}

// DefaultTokenLifetime is the expiry the form preselects.
const DefaultTokenLifetime = "90d"

// TokenForm is what the create form is refilled with after a refusal.
type TokenForm struct {
	Name, Owner string
	// Sites are the sites the token is limited to, comma-separated; "":
	// its owner's.
	Sites    string
	ReadOnly bool
	// Expires is one of TokenLifetimes' values; "": DefaultTokenLifetime.
	Expires string
}

// TokenRow is one API token as the section lists it: never its secret.
type TokenRow struct {
	ID         int64
	Name       string
	OwnerEmail string
	CreatedAt  time.Time
	// LastUsedAt is nil until the token is used; it is recorded at most
	// once a minute.
	LastUsedAt *time.Time
	// ExpiresAt is nil for a token that lasts until revoked.
	ExpiresAt *time.Time
	// ReadOnly: the token has only its owner's view permissions.
	ReadOnly bool
	Revoked  bool
	Expired  bool
	// Sites are the sites the token is limited to, within its owner's;
	// nil when it is not (it sees what its owner sees).
	Sites []string
	// SitesLimited: the token is limited to Sites (none left: it sees no
	// site).
	SitesLimited bool
}

// TokenOwner is an account a new token may act as, for the form's choice.
type TokenOwner struct {
	Email string
	Role  string
}

// TokensProps is the API tokens page.
type TokensProps struct {
	Layout LayoutProps
	Tokens []TokenRow
	// Owners are the accounts a token can be created for; the signed-in
	// admin is preselected.
	Owners []TokenOwner
	// NewToken is the secret of the token just created, shown this once;
	// NewTokenOwner is the account it acts as.
	NewToken      string
	NewTokenOwner string
	// FormError says why a token could not be created, in plain words;
	// Form is what the form is refilled with then.
	FormError string
	Form      TokenForm
	// Notice confirms an action ("Token revoked").
	Notice string
}

// tokenScopeText is a token's scope in words.
func tokenScopeText(readOnly bool) string {
	if readOnly {
		return "Read-only"
	}
	return "Full"
}

// tokenLifetimeSelected reports whether the form preselects value.
func (f TokenForm) tokenLifetimeSelected(value string) bool {
	if f.Expires == "" {
		return value == DefaultTokenLifetime
	}
	return value == f.Expires
}

// tokenOwnerSelected reports whether the form preselects the account: the
// one of a refused attempt, or the signed-in admin.
func (p TokensProps) tokenOwnerSelected(email string) bool {
	if p.Form.Owner != "" {
		return email == p.Form.Owner
	}
	return email == p.Layout.User.Email
}

// tokenBadge is a token's state in words.
func tokenBadge(t TokenRow) badge {
	switch {
	case t.Revoked:
		return badge{"Revoked", toneNeutral}
	case t.Expired:
		return badge{"Expired", toneNeutral}
	}
	return badge{"Active", toneOK}
}

// tokenSitesText is the sites a token sees, in words: its owner's, or
// the ones it is limited to.
func tokenSitesText(t TokenRow) string {
	switch {
	case !t.SitesLimited:
		return "Its owner's"
	case len(t.Sites) == 0:
		return "None (its sites were removed)"
	}
	return strings.Join(t.Sites, ", ")
}
