package auth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

func TestPermissions(t *testing.T) {
	t.Parallel()
	admin := Principal{Role: RoleAdmin}
	viewer := Principal{Role: RoleViewer}
	stranger := Principal{Role: "guest"}
	if !admin.Can(PermView) || !admin.Can(PermManage) || !admin.Can(PermTokens) {
		t.Error("admin must view, manage and manage API tokens")
	}
	if !viewer.Can(PermView) || viewer.Can(PermManage) || viewer.Can(PermTokens) {
		t.Error("viewer must view, and neither manage nor see API tokens")
	}
	if !admin.Can(PermAudit) || viewer.Can(PermAudit) {
		t.Error("the audit log is for admins only")
	}
	if stranger.Can(PermView) || stranger.Can(PermManage) {
		t.Error("an unknown role must have no permission")
	}
	if got := Permissions(RoleViewer); len(got) != 1 || got[0] != PermView {
		t.Errorf("Permissions(viewer) = %v", got)
	}
	p := Permissions(RoleAdmin)
	n := len(p)
	p[0] = PermManage // the caller's copy; the model must not change
	if !viewer.Can(PermView) || len(Permissions(RoleAdmin)) != n || Permissions(RoleAdmin)[0] != PermView {
		t.Error("Permissions returned the shared slice")
	}
	if Permissions("guest") != nil {
		t.Error("Permissions of an unknown role")
	}
}

// A read-only token keeps only the view permissions of its owner's role:
// an admin's reads the audit log, a viewer's does not gain it, and
// neither manages anything.
func TestReadOnlyPermissions(t *testing.T) {
	t.Parallel()
	admin := Principal{Role: RoleAdmin, ViaToken: true, ReadOnly: true}
	viewer := Principal{Role: RoleViewer, ViaToken: true, ReadOnly: true}
	if !admin.Can(PermView) || !admin.Can(PermAudit) {
		t.Error("a read-only admin token must read the pages and the audit log")
	}
	if admin.Can(PermManage) || admin.Can(PermTokens) || admin.Can("a.permission.added.later") {
		t.Error("a read-only admin token must not manage plugins, tokens, or anything not listed as a view permission")
	}
	if !viewer.Can(PermView) || viewer.Can(PermAudit) || viewer.Can(PermManage) {
		t.Error("a read-only viewer token has the viewer's reads and nothing more")
	}
	if !admin.ReadOnlyRefuses(PermManage) || viewer.ReadOnlyRefuses(PermManage) || admin.ReadOnlyRefuses(PermView) {
		t.Error("ReadOnlyRefuses must hold only where the role has the permission and the scope takes it away")
	}
	for _, perm := range ViewPermissions {
		if !slices.Contains(rolePermissions[RoleAdmin], perm) {
			t.Errorf("view permission %s is no permission of the role model", perm)
		}
	}
}

// CheckCSRF refuses every state change of a read-only token, whatever
// the route asks for, and lets its reads and a full token's changes pass.
func TestCheckCSRFRefusesReadOnlyTokens(t *testing.T) {
	t.Parallel()
	req := func(method string, p Principal) *http.Request {
		r := httptest.NewRequest(method, "/api/admin/plugins/updates/check", nil)
		return r.WithContext(WithPrincipal(r.Context(), p))
	}
	ro := Principal{Role: RoleAdmin, ViaToken: true, ReadOnly: true}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if err := CheckCSRF(req(m, ro)); !errors.Is(err, ErrReadOnly) || !errors.Is(err, ErrForbidden) {
			t.Errorf("%s with a read-only token: %v, want ErrReadOnly", m, err)
		}
	}
	if err := CheckCSRF(req(http.MethodGet, ro)); err != nil {
		t.Errorf("GET with a read-only token: %v", err)
	}
	if err := CheckCSRF(req(http.MethodPost, Principal{Role: RoleAdmin, ViaToken: true})); err != nil {
		t.Errorf("POST with a full token: %v", err)
	}
}

func TestParseTokenLifetime(t *testing.T) {
	t.Parallel()
	day := 24 * time.Hour
	for in, want := range map[string]time.Duration{
		"": 0, "never": NoExpiry, "30d": 30 * day, " 90d ": 90 * day, "1y": 365 * day, "12h": 12 * time.Hour,
		"1m": time.Minute, "36500d": MaxTokenLifetime,
	} {
		if got, err := ParseTokenLifetime(in); err != nil || got != want {
			t.Errorf("ParseTokenLifetime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"soon", "30", "0d", "-1d", "30s", "101y", "d", "1.5d", "36501d", "-5m"} {
		if _, err := ParseTokenLifetime(in); !errors.Is(err, ErrInvalidTokenLifetime) {
			t.Errorf("ParseTokenLifetime(%q): %v, want ErrInvalidTokenLifetime", in, err)
		}
	}
}
