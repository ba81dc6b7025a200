package updatecheck

import (
	"encoding/json"
	"testing"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/testing/npmreg"
)

// publisherOf reads code's result: the version published by an account
// new to the package and that account ("" for none), and its notes link.
func (b *bundle) publisherOf(code string) (version, account, releaseURL string) {
	b.t.Helper()
	b.db.QueryRow(b.t, `SELECT coalesce(new_publisher_version, ''), coalesce(new_publisher, ''), coalesce(release_url, '')
		FROM component_results WHERE code = $1`, code).Scan(&version, &account, &releaseURL)
	return version, account, releaseURL
}

// downgradeAudit is the audit log's source.downgrade rows of kind kind for
// code.
func (b *bundle) downgradeAudit(code string, kind readmodel.TrustDowngradeKind) []map[string]string {
	b.t.Helper()
	var out []map[string]string
	for _, e := range b.auditEvents() {
		if e.Action != string(readmodel.AuditSourceDowngrade) {
			continue
		}
		var d map[string]string
		if json.Unmarshal(e.Detail, &d) == nil && d["component"] == code && d["kind"] == string(kind) {
			out = append(out, d)
		}
	}
	return out
}

// A check against a registry whose offered version was published by an
// account that published none of the package's earlier versions records
// it on the result (new_publisher) with one source.downgrade audit row,
// however many checks see it; a registry that says nothing of publishers
// raises nothing; once the account published an earlier version, a newer
// one by it is no downgrade. The package's repository is the releases'
// notes link.
func TestNpmNewPublisherIsATrustDowngrade(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := npmreg.New(t)
	r.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	shop := map[string]npmreg.Version{
		"1.0.0": {Published: day(2), Publisher: "alice"},
		"1.1.0": {Published: day(3), Publisher: "alice"},
		"1.2.0": {Published: day(4), Publisher: "mallory"},
	}
	r.Publish("@acme/shop", "1.2.0", shop)
	r.SetRepository("@acme/shop", map[string]string{"type": "git", "url": "git+ssh://git@git.example.test/acme/shop.git", "directory": "packages/shop"})
	r.Publish("@acme/quiet", "1.1.0", map[string]npmreg.Version{"1.0.0": {Published: day(2)}, "1.1.0": {Published: day(3)}})
	b.useRegistry(r)
	b.sync(
		manifest.Component{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"},
		manifest.Component{Code: "acme--shop", Name: "Shop", Version: "1.1.0", Source: "npm:@acme/shop"},
		manifest.Component{Code: "acme--quiet", Name: "Quiet", Version: "1.0.0", Source: "npm:@acme/quiet"},
	)
	b.run(lease.Operator)
	b.run(lease.Operator)

	if v, account, notes := b.publisherOf("acme--shop"); v != "1.2.0" || account != "mallory" || notes != "https://git.example.test/acme/shop" {
		t.Errorf("shop: new publisher %q %q, notes %q; want 1.2.0 by mallory, the repository's link", v, account, notes)
	}
	if rows := b.downgradeAudit("acme--shop", readmodel.DowngradePublisher); len(rows) != 1 ||
		rows[0]["version"] != "1.2.0" || rows[0]["account"] != "mallory" {
		t.Errorf("shop's source.downgrade rows after two checks: %v, want one naming 1.2.0 and mallory", rows)
	}
	if v, account, notes := b.publisherOf("acme--quiet"); v != "" || account != "" || notes != "" {
		t.Errorf("quiet (no publisher said, no repository): new publisher %q %q, notes %q; want none", v, account, notes)
	}
	if rows := b.downgradeAudit("acme--quiet", readmodel.DowngradePublisher); len(rows) != 0 {
		t.Errorf("quiet: %v, want no downgrade", rows)
	}

	// mallory published 1.2.0 before 1.3.0: not new to the package then.
	shop["1.3.0"] = npmreg.Version{Published: day(5), Publisher: "mallory"}
	r.Publish("@acme/shop", "1.3.0", shop)
	b.run(lease.Operator)
	if v, account, _ := b.publisherOf("acme--shop"); v != "" || account != "" {
		t.Errorf("shop offered 1.3.0: new publisher %q %q, want none", v, account)
	}
	if rows := b.downgradeAudit("acme--shop", readmodel.DowngradePublisher); len(rows) != 1 {
		t.Errorf("shop: %d source.downgrade rows, want still the one", len(rows))
	}
}
