package web_test

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/remedy"
)

// The document's enums are the vocabularies the code defines once, in
// internal/readmodel: the catalog's filters, the audit log's kinds and
// actions, the check statuses and triggers, the event types, the channel
// kinds and choices of events, the delivery states, the trust states and
// the kinds of attention. A value added in Go and not in the
// document, or the other way round, fails here.
func TestOpenAPIEnumsAreTheVocabularies(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	// enum is the enum at a path of member names; in an array, a number
	// picks an element and a name the parameter of that name.
	enum := func(path ...string) []string {
		t.Helper()
		node := doc
		for _, name := range path {
			switch n := node.(type) {
			case map[string]any:
				node = n[name]
			case []any:
				i, err := strconv.Atoi(name)
				if err != nil {
					i = slices.IndexFunc(n, func(e any) bool { m, _ := e.(map[string]any); return m["name"] == name })
				}
				if i < 0 || i >= len(n) {
					t.Fatalf("%v: no %q", path, name)
				}
				node = n[i]
			}
			if node == nil {
				t.Fatalf("%v: no %q", path, name)
			}
		}
		values, _ := node.(map[string]any)["enum"].([]any)
		if values == nil {
			t.Fatalf("%s has no enum", path)
		}
		out := make([]string, len(values))
		for i, v := range values {
			out[i], _ = v.(string)
		}
		return out
	}
	check := func(path string, want []string) {
		t.Helper()
		if got := enum(split(path)...); !slices.Equal(got, want) {
			t.Errorf("%s: the document's enum is %v, the vocabulary's %v", path, got, want)
		}
	}
	var filters []string
	for _, f := range readmodel.CatalogFilters {
		if f != readmodel.FilterAll {
			filters = append(filters, string(f))
		}
	}
	check("paths|/api/admin/plugins/updates|get/parameters/status/schema", filters)
	var packageFilters []string
	for _, f := range readmodel.PackageFilters[1:] {
		packageFilters = append(packageFilters, string(f))
	}
	check("paths|/api/admin/packages|get/parameters/filter/schema", packageFilters)
	var fleetSorts, fleetFilters []string
	for _, o := range readmodel.FleetSorts[1:] {
		fleetSorts = append(fleetSorts, string(o))
	}
	for _, f := range readmodel.FleetFilters[1:] {
		fleetFilters = append(fleetFilters, string(f))
	}
	check("paths|/api/admin/fleet|get/parameters/sort/schema", fleetSorts)
	check("paths|/api/admin/fleet|get/parameters/filter/schema", fleetFilters)
	var fixKinds []string
	for _, k := range remedy.Kinds() {
		fixKinds = append(fixKinds, string(k))
	}
	check("components/schemas/TreeFix/properties/kind", fixKinds)
	check("components/schemas/PackageChange/properties/state", strs(readmodel.ChangeStates()))
	check("components/schemas/TreeAttentionItem/properties/kind", strs(readmodel.TreeAttentionKinds))
	check("components/schemas/PackageChange/properties/unread", []string{string(readmodel.UnreadPastBound), string(readmodel.UnreadFailed)})

	var filterable []string
	for _, k := range readmodel.AllAuditKinds() {
		if k.Filterable() {
			filterable = append(filterable, string(k))
		}
	}
	check("paths|/api/admin/audit|get/parameters/kind/schema", filterable)
	check("components/schemas/AuditEntry/properties/kind", strs(readmodel.AllAuditKinds()))
	check("components/schemas/AuditEntry/properties/action", strs(readmodel.AllAuditActions()))

	check("components/schemas/Run/properties/status", strs(readmodel.ShownRunStatuses()))
	check("components/schemas/Run/properties/trigger", strs(readmodel.AllTriggers()))
	var ranToEnd []readmodel.CheckStatus
	for _, s := range readmodel.AllCheckStatuses() {
		if s.RanToEnd() {
			ranToEnd = append(ranToEnd, s)
		}
	}
	check("components/schemas/CheckResult/properties/status", strs(ranToEnd))
	// The check's other answers are statuses a check answers (apiCheck
	// says which status code each gets).
	for _, path := range []string{
		"paths|/api/admin/plugins/updates/check|post/responses/409/content|application/json|schema/properties/status",
		"paths|/api/admin/plugins/updates/check|post/responses/429/content|application/json|schema/properties/status",
		"paths|/api/admin/plugins/updates/check|post/responses/503/content|application/json|schema/oneOf/0/properties/status",
	} {
		for _, s := range enum(split(path)...) {
			if st := readmodel.CheckStatus(s); !st.Answered() && st != readmodel.StatusInterrupted {
				t.Errorf("%s: %q is not a status a check answers", path, s)
			}
		}
	}

	check("components/schemas/Delivery/properties/type", strs(readmodel.AllEventTypes()))
	check("components/schemas/Delivery/properties/state", strs(readmodel.AllDeliveryStates()))
	for _, schema := range []string{"Channel", "CreatedChannel", "NewChannel"} {
		check("components/schemas/"+schema+"/properties/kind", strs(readmodel.AllChannelKinds()))
		check("components/schemas/"+schema+"/properties/events", strs(readmodel.AllChannelEvents()))
	}
	check("components/schemas/Source/properties/signature_state", strs(readmodel.AllTrustStates()))
	check("components/schemas/Summary/properties/attention/items/properties/kind", strs(readmodel.AttentionKinds))
	check("components/schemas/Source/properties/source_kind", strs(readmodel.AllSourceKinds()))
	check("components/schemas/InputRefusal/properties/input", strs(readmodel.Inputs))
	check("components/schemas/Signal/properties/kind", strs(readmodel.SignalKinds()))
	check("components/schemas/UnreadDependency/properties/reason", strs(readmodel.UnreadReasons()))
	check("components/schemas/ProvenanceUnread/properties/reason", strs(readmodel.ProvenanceUnreadReasons()))
	for _, schema := range []string{"CatalogEntry", "ComponentDetail"} {
		// null: a component with no source.
		check("components/schemas/"+schema+"/properties/source_kind", append(strs(readmodel.AllSourceKinds()), ""))
	}
}

// split splits a path of member names at its slashes, except within
// |…|, one name with slashes (an API path, a media type).
func split(path string) []string {
	var out []string
	for i, part := range strings.Split(path, "|") {
		if i%2 == 1 {
			out = append(out, part)
			continue
		}
		for _, name := range strings.Split(strings.Trim(part, "/"), "/") {
			if name != "" {
				out = append(out, name)
			}
		}
	}
	return out
}

// strs is a vocabulary's values as strings.
func strs[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}
