package views

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// tokensLayout is an admin's layout, with the API tokens section.
func tokensLayout() LayoutProps {
	l := layout(calm(), true)
	l.User.CanManageTokens = true
	return l
}

func tokensProps() TokensProps {
	return TokensProps{
		Layout:        tokensLayout(),
		NewToken:      "upc_SECRET-shown-once",
		NewTokenOwner: "metrics@example.org",
		Owners:        []TokenOwner{{Email: "metrics@example.org", Role: "viewer"}, {Email: "ops@example.org", Role: "admin"}},
		Tokens: []TokenRow{
			{ID: 1, Name: "deploy", OwnerEmail: "ops@example.org", CreatedAt: now.Add(-30 * 24 * time.Hour), Revoked: true},
			{ID: 2, Name: "prometheus", OwnerEmail: "metrics@example.org", CreatedAt: now.Add(-7 * 24 * time.Hour), LastUsedAt: ago(2 * time.Minute)},
			{ID: 3, Name: "old ci", OwnerEmail: "ops@example.org", CreatedAt: now.Add(-400 * 24 * time.Hour), Expired: true},
			{ID: 4, Name: "new", OwnerEmail: "metrics@example.org", CreatedAt: now.Add(-time.Minute)},
		},
	}
}

func tokensEmptyProps() TokensProps {
	return TokensProps{Layout: tokensLayout(), Owners: []TokenOwner{{Email: "ops@example.org", Role: "admin"}},
		FormError: "The token was not created: the name must be at most 100 characters, without control characters."}
}

// The navigation links to the section only for those who may open it.
func TestTokensNavOnlyWithThePermission(t *testing.T) {
	t.Parallel()
	link := func(l LayoutProps) bool {
		return strings.Contains(render(t, Dashboard(DashboardProps{Layout: l})), `href="`+PathTokens+`"`)
	}
	if !link(tokensLayout()) {
		t.Error("an admin with tokens.can_manage has no link to the API tokens")
	}
	admin := layout(calm(), true) // CanManage without CanManageTokens
	if link(admin) || link(layout(calm(), false)) {
		t.Error("the API tokens link shows without tokens.can_manage")
	}
}

// Each token shows name, owner, created, last used and state; only live
// tokens have a revoke button, which names its row; the new secret shows
// once, and the signed-in admin is the preselected owner.
func TestTokensPage(t *testing.T) {
	t.Parallel()
	root := doc(t, Tokens(tokensProps()))
	rows := byTestID(root, "token-row")
	if len(rows) != 4 {
		t.Fatalf("%d token rows, want 4", len(rows))
	}
	want := [][]string{
		{"deploy", "ops@example.org", "30 Oct 2026", "never", "Revoked", ""},
		{"prometheus", "metrics@example.org", "7 days ago", "2 minutes ago", "Active", "Revoke prometheus of metrics@example.org"},
		{"old ci", "ops@example.org", "25 Oct 2025", "never", "Expired", ""},
		{"new", "metrics@example.org", "1 minute ago", "never", "Active", "Revoke new of metrics@example.org"},
	}
	for i, r := range rows {
		cells := findAll(r, func(n *html.Node) bool { return n.Data == "th" || n.Data == "td" })
		var got []string
		for _, c := range cells {
			got = append(got, text(c))
		}
		if strings.Join(got, "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d = %q, want %q", i, got, want[i])
		}
	}
	buttons := byTestID(root, "token-revoke")
	if len(buttons) != 2 {
		t.Fatalf("%d revoke buttons, want 2 (the live tokens)", len(buttons))
	}
	forms := findAll(root, func(n *html.Node) bool { a, _ := attr(n, "action"); return n.Data == "form" && a == TokenRevokePath(2) })
	if len(forms) != 1 {
		t.Fatalf("no revoke form posting to %s", TokenRevokePath(2))
	}
	if s := text(one(t, root, "token-secret")); !strings.Contains(s, "upc_SECRET-shown-once") || !strings.Contains(s, "metrics@example.org") {
		t.Errorf("secret notice = %q", s)
	}
	selected := findAll(root, func(n *html.Node) bool { _, ok := attr(n, "selected"); return n.Data == "option" && ok })
	if len(selected) != 1 || text(selected[0]) != "ops@example.org (Administrator)" {
		t.Errorf("preselected owner: %d options, want the signed-in admin", len(selected))
	}
	if len(byTestID(doc(t, Tokens(TokensProps{Layout: tokensLayout()})), "token-secret")) != 0 {
		t.Error("a page without a new token shows a secret")
	}
}
