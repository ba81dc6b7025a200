package views

import (
	"reflect"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The detail page renders the read model's row of a component as it is
// (readmodel.DetailRow, embedded): no field of the page's props is a twin
// of one of the row's, so nothing is copied from the catalog's read by
// hand, as the audit log renders readmodel.AuditRow.
func TestDetailPropsAreTheRow(t *testing.T) {
	t.Parallel()
	props, row := reflect.TypeFor[DetailProps](), reflect.TypeFor[readmodel.DetailRow]()
	embedded := false
	for f := range props.Fields() {
		if f.Anonymous && f.Type == row {
			embedded = true
			continue
		}
		if _, twin := row.FieldByName(f.Name); twin {
			t.Errorf("DetailProps.%s repeats readmodel.DetailRow.%s: read the row's", f.Name, f.Name)
		}
	}
	if !embedded {
		t.Error("DetailProps does not embed readmodel.DetailRow")
	}
}
