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
			{ID: 2, Name: "prometheus", SitesLimited: true, Sites: []string{"acme", "globex"}, OwnerEmail: "metrics@example.org", CreatedAt: now.Add(-7 * 24 * time.Hour), LastUsedAt: ago(2 * time.Minute),
				ReadOnly: true, ExpiresAt: ago(-83 * 24 * time.Hour)},
			{ID: 3, Name: "old ci", OwnerEmail: "ops@example.org", CreatedAt: now.Add(-400 * 24 * time.Hour), Expired: true, ExpiresAt: ago(35 * 24 * time.Hour), SitesLimited: true},
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

// Each token shows name, id, owner, scope, sites, created, last used,
// expiry and state; only live tokens have a revoke link, to the question, which names
// its row; the new secret shows once, and the signed-in admin is the
// preselected owner, full scope and 90 days the preselected choices.
func TestTokensPage(t *testing.T) {
	t.Parallel()
	root := doc(t, Tokens(tokensProps()))
	rows := byTestID(root, "token-row")
	if len(rows) != 4 {
		t.Fatalf("%d token rows, want 4", len(rows))
	}
	want := [][]string{
		{"deploy", "1", "ops@example.org", "Full", "Its owner's", "30 Oct 2026", "never", "never", "Revoked", ""},
		{"prometheus", "2", "metrics@example.org", "Read-only", "acme, globex", "7 days ago", "2 minutes ago", "20 Feb 2027", "Active", "Revoke prometheus of metrics@example.org"},
		{"old ci", "3", "ops@example.org", "Full", "None (its sites were removed)", "25 Oct 2025", "never", "25 Oct 2026", "Expired", ""},
		{"new", "4", "metrics@example.org", "Full", "Its owner's", "1 minute ago", "never", "never", "Active", "Revoke new of metrics@example.org"},
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
	if href, _ := attr(buttons[0], "href"); buttons[0].Data != "a" || href != TokenRevokePath(2) {
		t.Fatalf("the revoke of token 2 is a <%s> to %q, want a link to the question at %s", buttons[0].Data, href, TokenRevokePath(2))
	}
	if forms := findAll(root, func(n *html.Node) bool { a, _ := attr(n, "action"); return n.Data == "form" && a == TokenRevokePath(2) }); len(forms) != 0 {
		t.Fatal("the tokens page posts a revocation itself: it must ask first")
	}
	if s := text(one(t, root, "token-secret")); !strings.Contains(s, "upc_SECRET-shown-once") || !strings.Contains(s, "metrics@example.org") {
		t.Errorf("secret notice = %q", s)
	}
	selected := findAll(root, func(n *html.Node) bool { _, ok := attr(n, "selected"); return n.Data == "option" && ok })
	if len(selected) != 2 || text(selected[0]) != "ops@example.org (Administrator)" || text(selected[1]) != "in 90 days" {
		t.Errorf("preselected options: %d, want the signed-in admin and 90 days", len(selected))
	}
	if box := findAll(root, func(n *html.Node) bool { id, _ := attr(n, "id"); return id == "token-read-only" }); len(box) != 1 {
		t.Error("no read-only checkbox")
	} else if _, checked := attr(box[0], "checked"); checked {
		t.Error("the read-only checkbox is checked by default")
	}
	if len(byTestID(doc(t, Tokens(TokensProps{Layout: tokensLayout()})), "token-secret")) != 0 {
		t.Error("a page without a new token shows a secret")
	}
}

// After a refusal the form comes back as it was sent: name, owner, scope
// and expiry.
func TestTokensFormRefilled(t *testing.T) {
	t.Parallel()
	p := tokensProps()
	p.NewToken = ""
	p.FormError = "The token was not created: choose when it expires from the list."
	p.Form = TokenForm{Name: "grafana", Owner: "metrics@example.org", ReadOnly: true, Expires: "1y"}
	root := doc(t, Tokens(p))
	selected := findAll(root, func(n *html.Node) bool { _, ok := attr(n, "selected"); return n.Data == "option" && ok })
	if len(selected) != 2 || text(selected[0]) != "metrics@example.org (Viewer)" || text(selected[1]) != "in 1 year" {
		t.Errorf("refilled choices: %d selected", len(selected))
	}
	box := findAll(root, func(n *html.Node) bool { id, _ := attr(n, "id"); return id == "token-read-only" })
	name := findAll(root, func(n *html.Node) bool { id, _ := attr(n, "id"); return id == "token-name" })
	if _, checked := attr(box[0], "checked"); !checked {
		t.Error("read-only is not checked again")
	}
	if v, _ := attr(name[0], "value"); v != "grafana" {
		t.Errorf("name refilled with %q", v)
	}
}
