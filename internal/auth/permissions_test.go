package auth

import "testing"

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
