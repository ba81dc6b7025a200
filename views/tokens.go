package views

import (
	"strconv"
	"time"
)

// PathTokens is the API tokens section of the AdminCP (tokens.can_manage):
// every user's tokens, a form to create one, a revoke button on each.
const PathTokens = "/admin/tokens"

// NavTokens is the navigation entry of the API tokens section.
const NavTokens NavItem = "tokens"

// TokenRevokePath is where an admin POSTs to revoke token id.
func TokenRevokePath(id int64) string {
	return PathTokens + "/" + strconv.FormatInt(id, 10) + "/revoke"
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
	Revoked    bool
	Expired    bool
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
	// FormError says why a token could not be created, in plain words.
	FormError string
	// Notice confirms an action ("Token revoked").
	Notice string
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
