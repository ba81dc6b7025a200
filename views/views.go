// Package views holds upcheck's templ templates: one layout, one props struct
// per page, no database or HTTP calls inside a template.
package views
