package catalog

import "strings"

// The catalog's search also finds a component by the id or an alias (a
// CVE or GHSA id) of an advisory in its current result, dismissed or not
// (a withdrawn advisory is in no result): the whole search text, ignoring
// case and surrounding spaces, must be one of them. The keys come from the
// database (the generated column component_results.advisory_keys), where
// upcheck_advisory_keys defines them.

// indexKeys records that row i lists the advisory keys.
func (c *Snapshot) indexKeys(keys []string, i int) {
	for _, k := range keys {
		if c.byKey == nil {
			c.byKey = make(map[string][]int32)
		}
		c.byKey[k] = append(c.byKey[k], int32(i))
	}
}

// withAdvisory adds to byText (the rows whose code or name holds the
// search, in order) the rows an advisory key of search finds, keeping the
// order and each row once.
func (c *Snapshot) withAdvisory(byText []int32, search string) []int32 {
	byKey := c.byKey[strings.ToUpper(strings.TrimSpace(search))]
	if len(byKey) == 0 {
		return byText
	}
	out := make([]int32, 0, len(byText)+len(byKey))
	i, j := 0, 0
	for i < len(byText) || j < len(byKey) {
		switch {
		case j == len(byKey) || (i < len(byText) && byText[i] < byKey[j]):
			out = append(out, byText[i])
			i++
		case i == len(byText) || byKey[j] < byText[i]:
			out = append(out, byKey[j])
			j++
		default: // the same row both ways
			out = append(out, byText[i])
			i, j = i+1, j+1
		}
	}
	return out
}
