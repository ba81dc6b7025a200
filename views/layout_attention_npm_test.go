package views

import (
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The attention banner and the dashboard word a trust downgrade and a
// deprecated installed version, and the summary's counts of both: the
// banner shows for them alone, as a warning, and never offers the update
// that lost provenance as the move to make.
func TestAttentionWordsNpmKinds(t *testing.T) {
	t.Parallel()
	lost := readmodel.AttentionItem{Code: "acme-blog", Name: "Blog", Installed: "2.3.0", UpdateVersion: strp("2.5.0"),
		Kind: readmodel.KindProvenanceLost, ProvenanceLost: strp("2.5.0")}
	dep := readmodel.AttentionItem{Code: "acme-old", Name: "Old", Installed: "1.0.0", UpdateVersion: strp("1.1.0"),
		Kind: readmodel.KindDeprecated, Deprecated: strp("use @acme/new instead")}
	for _, c := range []struct {
		item readmodel.AttentionItem
		want string
	}{
		{lost, "Blog 2.3.0: trust downgrade: 2.5.0 was published without the provenance that 2.3.0 had"},
		{dep, "Old 1.0.0 → 1.1.0: deprecated by its publisher: use @acme/new instead"},
	} {
		if got := attentionSubject(c.item) + ": " + attentionProblem(c.item); got != c.want {
			t.Errorf("%s: %q, want %q", c.item.Code, got, c.want)
		}
	}

	s := readmodel.Summary{Components: 2, TrustDowngrades: 1, Deprecated: 1, Attention: []readmodel.AttentionItem{lost, dep}, AttentionTotal: 2}
	root := doc(t, Dashboard(DashboardProps{Layout: layout(s, true)}))
	alert := one(t, root, "security-alert")
	if got := text(one(t, alert, "security-alert-text")); got != "1 trust downgrade and 1 deprecated installed version need attention." {
		t.Errorf("banner %q", got)
	}
	if class, _ := attr(alert, "class"); !strings.Contains(class, "alert-warn") || strings.Contains(class, "alert-danger") {
		t.Errorf("banner class %q, want a warning", class)
	}
	if got := text(one(t, root, "widget-trust-downgrades")); got != "1" {
		t.Errorf("widget's trust downgrades %q", got)
	}
	if got := text(one(t, root, "widget-deprecated")); got != "1" {
		t.Errorf("widget's deprecated %q", got)
	}
	items := text(one(t, root, "widget-attention-items"))
	if !strings.Contains(items, "trust downgrade: 2.5.0 was published without the provenance that 2.3.0 had") ||
		!strings.Contains(items, "deprecated by its publisher: use @acme/new instead") {
		t.Errorf("widget's items %q", items)
	}
	if got := securityAlertText(2, 1, 0, 3); got != "2 security updates, 1 vulnerable component and 3 deprecated installed versions need attention." {
		t.Errorf("counts %q", got)
	}
	if got := securityAlertText(0, 0, 1, 0); got != "1 trust downgrade needs attention." {
		t.Errorf("one %q", got)
	}
}
