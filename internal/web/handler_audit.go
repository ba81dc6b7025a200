package web

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/views"
)

// auditPageSize is the Audit log page's size.
const auditPageSize = 50

// auditKind reads the kind filter; an unknown kind is a 400, as the
// catalog's unknown filter is.
func auditKind(c echo.Context) (string, error) {
	if k := c.QueryParam(views.ParamKind); k == "" || readmodel.AuditKind(k).Filterable() {
		return k, nil
	}
	return "", echo.NewHTTPError(http.StatusBadRequest, "Unknown kind: use dismissal, check, account or trust.")
}

// auditPage lists the audit log, newest first, one page at a time.
func (s *Server) auditPage(c echo.Context) error {
	kind, err := auditKind(c)
	if err != nil {
		return err
	}
	page := 1
	if v := c.QueryParam(views.ParamPage); v != "" {
		if page, err = strconv.Atoi(v); err != nil || page < 1 || page > 1_000_000 {
			return echo.NewHTTPError(http.StatusBadRequest, "The page must be a number from 1.")
		}
	}
	ctx := c.Request().Context()
	total, err := s.store.AuditEventCount(ctx, kind)
	if err != nil {
		return err
	}
	events, err := s.store.AuditEvents(ctx, kind, auditPageSize, (page-1)*auditPageSize)
	if err != nil {
		return err
	}
	for i := range events {
		events[i].DetailText = detailText(events[i])
	}
	return renderOK(c, views.Audit(views.AuditProps{Layout: layout(c), Rows: events, Kind: kind, Page: page,
		PageSize: auditPageSize, Total: total}))
}

// auditColumns are the CSV's header, one column per readmodel.AuditRow field.
var auditColumns = []string{"time_utc", "kind", "action", "actor", "component", "advisory", "reason",
	"expires_at_utc", "trigger", "status", "detail"}

// auditCSV exports every entry of the page's kind filter as CSV (RFC
// 4180), newest first, as an attachment. Cells that a spreadsheet would
// take for a formula are defused (csvCell).
func (s *Server) auditCSV(c echo.Context) error {
	kind, err := auditKind(c)
	if err != nil {
		return err
	}
	events, err := s.store.AuditEvents(c.Request().Context(), kind, 0, 0)
	if err != nil {
		return err
	}
	name := "upcheck-audit"
	if kind != "" {
		name += "-" + kind
	}
	name += "-" + time.Now().UTC().Format("20060102T150405Z") + ".csv"
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	h.Set("Cache-Control", "no-store")
	c.Response().WriteHeader(http.StatusOK)
	w := csv.NewWriter(c.Response())
	w.UseCRLF = true
	if err := w.Write(auditColumns); err != nil {
		return err
	}
	for _, e := range events {
		expires := ""
		if e.ExpiresAt != nil {
			expires = e.ExpiresAt.UTC().Format(time.RFC3339)
		}
		record := []string{e.At.UTC().Format(time.RFC3339Nano), e.Kind, e.Action, views.AuditActorText(e.Actor, e.Action), e.Component, e.Advisory,
			e.Reason, expires, e.Trigger, e.Status, string(e.Detail)}
		for i := range record {
			record[i] = csvCell(record[i])
		}
		if err := w.Write(record); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}

// csvCell defuses a cell a spreadsheet would run as a formula (OWASP's
// CSV injection): one that starts with =, +, -, @, a tab or a carriage
// return gets a leading apostrophe, which spreadsheets show as text.
// Quoting is encoding/csv's.
func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// detailText words an entry's JSON detail for the page, for the entries
// the views do not word themselves: a check's counts and error, an account
// change's members ("email: ada@example.org, role: admin").
func detailText(e readmodel.AuditRow) string {
	var m map[string]any
	if len(e.Detail) == 0 || json.Unmarshal(e.Detail, &m) != nil {
		return ""
	}
	switch readmodel.AuditAction(e.Action) {
	case readmodel.AuditRegistryKeysPin, readmodel.AuditRegistryKeysChange:
		return registryDetailText(readmodel.AuditAction(e.Action), m)
	}
	switch readmodel.AuditKind(e.Kind) {
	case readmodel.AuditKindCheck:
		return checkDetailText(m)
	case readmodel.AuditKindTrust:
		return trustDetailText(m)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		name := strings.ReplaceAll(k, "_", " ")
		switch v := m[k].(type) {
		case string:
			parts = append(parts, name+": "+v)
		case float64:
			parts = append(parts, name+": "+strconv.FormatFloat(v, 'f', -1, 64))
		case nil:
		default:
			b, _ := json.Marshal(v)
			parts = append(parts, fmt.Sprintf("%s: %s", name, b))
		}
	}
	return strings.Join(parts, ", ")
}

// checkDetailText is a check's counts, "3 sources fetched, 0 unchanged, 1
// failed", and its error; "" for a check that fetched nothing.
func checkDetailText(m map[string]any) string {
	n := func(k string) int {
		v, _ := m[k].(float64)
		return int(v)
	}
	var parts []string
	if fetched, same, failed := n("fetched"), n("not_modified"), n("failed"); fetched+same+failed > 0 {
		parts = append(parts, fmt.Sprintf("%d fetched, %d unchanged, %d failed", fetched, same, failed))
	}
	if msg, _ := m["error"].(string); msg != "" {
		parts = append(parts, "error: "+msg)
	}
	return strings.Join(parts, "; ")
}

// registryDetailText is an npm registry's keys pinned, "http://…/: key
// SHA256:ab… pinned on first sight", or changed, "http://…/: key
// SHA256:ab… → keys SHA256:cd…, SHA256:ef…" ("no key" for none).
func registryDetailText(action readmodel.AuditAction, m map[string]any) string {
	list := func(name string) string {
		var keys []string
		items, _ := m[name].([]any)
		for _, k := range items {
			if s, ok := k.(string); ok {
				keys = append(keys, s)
			}
		}
		return keysWords(keys, "")
	}
	registry, _ := m["registry"].(string)
	if action == readmodel.AuditRegistryKeysPin {
		if list("new_keys") == noKeyWords {
			return registry + ": it publishes no signing keys (first sight)"
		}
		return registry + ": " + list("new_keys") + " pinned on first sight"
	}
	return registry + ": " + list("old_keys") + " → " + list("new_keys")
}

// noKeyWords stands for an empty set of keys in an audit entry's detail.
const noKeyWords = "no key"

// keysWords is a set of key ids as an audit entry says it: "key ab12…",
// "keys ab12…, cd34…", "2 of keys ab12…, cd34…" (threshold given), or
// "no key".
func keysWords(keys []string, threshold string) string {
	switch {
	case len(keys) == 0:
		return noKeyWords
	case len(keys) == 1:
		return "key " + keys[0]
	case threshold != "":
		return threshold + " of keys " + strings.Join(keys, ", ")
	}
	return "keys " + strings.Join(keys, ", ")
}

// trustDetailText is a change of a source's trusted keys: "https://…: key
// ab12cd34…ef01 (statement 0) → 2 of keys 99887766…5544, 0a1b… (statement
// 1): key statement 1 endorsed by the keys trusted before", or of its
// pinned keys (no statement): "https://…: no key → key ab12cd34…ef01: the
// manifest pins keys where it pinned none, for blog".
func trustDetailText(m map[string]any) string {
	set := func(prefix string) string {
		var keys []string
		list, _ := m[prefix+"_keys"].([]any)
		for _, k := range list {
			if s, ok := k.(string); ok {
				keys = append(keys, s)
			}
		}
		threshold, _ := m[prefix+"_threshold"].(float64)
		text := keysWords(keys, strconv.Itoa(int(threshold)))
		// A manifest's pin change (source.pin) has no statement.
		if version, ok := m[prefix+"_version"].(float64); ok {
			text += fmt.Sprintf(" (statement %d)", int(version))
		}
		return text
	}
	source, _ := m["source"].(string)
	reason, _ := m["reason"].(string)
	if reason != "" {
		reason = ": " + reason
	}
	return fmt.Sprintf("%s: %s → %s%s", source, set("old"), set("new"), reason)
}
