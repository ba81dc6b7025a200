package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/updatedoc"
)

// A docField is one member of a release or an advisory that `publisher
// release add` or `publisher advisory add` can write: its flag is the
// member's name with "-" for "_" (requires_core: --requires-core), and the
// members are written in the order of the table. Adding a member to the
// format is one line in a table.
type docField struct {
	name  string
	kind  fieldKind
	usage string
}

type fieldKind int

const (
	textField      fieldKind = iota // a string
	boolField                       // true when the flag is given
	timeField                       // an RFC 3339 time, or "now"
	listField                       // an array of strings: the flag repeated, or values separated by commas
	referenceField                  // an array of OSV references: the flag repeated, each TYPE=URL
)

var releaseFields = []docField{
	{"version", textField, "the version, a strict semantic version (2.4.0)"},
	{"released", timeField, `when it was published: an RFC 3339 time, or "now"`},
	{"requires_core", textField, "the range of core versions it runs on (>=1.8.0)"},
	{"security", boolField, "the release fixes a security problem"},
	{"severity", textField, "low, medium, high or critical"},
	{"summary", textField, "one line for the operator"},
	{"url", textField, "the release notes, an absolute http(s) URL"},
}

var advisoryFields = []docField{
	{"id", textField, "your identifier (ACME-2026-007), unique within the package"},
	{"severity", textField, "low, medium, high or critical"},
	{"affected", textField, "the range of vulnerable versions (<2.4.0)"},
	{"fixed_in", textField, "the first version with the fix, outside affected"},
	{"summary", textField, "one line for the operator"},
	{"url", textField, "the full advisory, an absolute http(s) URL"},
	{"aliases", listField, "other databases' ids of it (CVE-2026-1234, GHSA-xxxx-xxxx-xxxx); repeat the flag or separate with commas"},
	{"cvss", textField, "a CVSS v3.0, v3.1 or v4.0 vector (CVSS:3.1/AV:N/…); without --severity it gives the severity"},
	{"modified", timeField, `when you last changed the advisory: an RFC 3339 time, or "now"`},
	{"withdrawn", timeField, `when you withdrew it (it then affects nothing): an RFC 3339 time, or "now"`},
	{"references", referenceField, "a link of OSV's: TYPE=URL (ADVISORY, FIX, REPORT, WEB, …); repeat the flag"},
}

// fieldValue is the flag.Value of one docField; set is false until the
// flag is given, and only given flags become members.
type fieldValue struct {
	field docField
	set   bool
	value any
}

func (v *fieldValue) String() string {
	if v == nil || v.value == nil {
		return ""
	}
	return fmt.Sprint(v.value)
}

func (v *fieldValue) IsBoolFlag() bool { return v.field.kind == boolField }

func (v *fieldValue) Set(s string) error {
	switch v.field.kind {
	case boolField:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		v.value = b
	case timeField:
		if s == "now" {
			s = time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
		}
		v.value = s
	case listField:
		list, _ := v.value.([]string)
		for _, item := range strings.Split(s, ",") {
			if item = strings.TrimSpace(item); item != "" {
				list = append(list, item)
			}
		}
		v.value = list
	case referenceField:
		typ, u, ok := strings.Cut(s, "=")
		if !ok {
			return errors.New("want TYPE=URL, e.g. FIX=https://…")
		}
		refs, _ := v.value.([]map[string]string)
		v.value = append(refs, map[string]string{"type": typ, "url": u})
	default:
		v.value = s
	}
	v.set = true
	return nil
}

// defineFields adds a flag for every field and returns their values.
func defineFields(fs *flag.FlagSet, fields []docField) []*fieldValue {
	values := make([]*fieldValue, len(fields))
	for i, f := range fields {
		values[i] = &fieldValue{field: f}
		fs.Var(values[i], strings.ReplaceAll(f.name, "_", "-"), f.usage)
	}
	return values
}

// entry is the JSON object of the fields that were given, in table order.
func entry(values []*fieldValue) (json.RawMessage, error) {
	var obj object
	for _, v := range values {
		if !v.set {
			continue
		}
		if err := obj.put(v.field.name, v.value); err != nil {
			return nil, err
		}
	}
	return marshal(obj)
}

// runAdd is `publisher release add` and `publisher advisory add`: kind is
// "release" or "advisory", and the entry goes at the end of the package's
// "releases" or "advisories".
func runAdd(kind string, args []string, stdout, stderr io.Writer) error {
	fields, list := releaseFields, "releases"
	if kind == "advisory" {
		fields, list = advisoryFields, "advisories"
	}
	var code, expires string
	var values []*fieldValue
	rest, err := parseFlags("publisher "+kind+" add", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&code, "package", "", "the package (component code) it belongs to; added when absent")
		fs.StringVar(&expires, "expires", "", "also set the document's expires (RFC 3339 time)")
		values = defineFields(fs, fields)
	})
	if err != nil {
		return err
	}
	if len(rest) != 1 || code == "" {
		fmt.Fprintf(stderr, "upcheck publisher %s add: want --package CODE and exactly one DOCUMENT (after the flags)\n", kind)
		return errUsage
	}
	path := rest[0]
	raw, err := entry(values)
	if err != nil {
		return err
	}
	summary, err := editDocument(path, stderr, func(doc *object) error {
		if expires != "" {
			b, err := marshal(expires)
			if err != nil {
				return err
			}
			doc.setBefore("expires", b, "packages")
		}
		return appendEntry(doc, code, list, raw)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: added %s to package %q; %s\n", path, kind, code, summary)
	return nil
}

// appendEntry puts raw at the end of packages[code][list], making the
// package and the list when absent.
func appendEntry(doc *object, code, list string, raw json.RawMessage) error {
	packages, err := doc.child("packages")
	if err != nil {
		return err
	}
	pkg, err := packages.child(code)
	if err != nil {
		return err
	}
	var entries []json.RawMessage
	if old, ok := pkg.get(list); ok && string(old) != "null" {
		if err := json.Unmarshal(old, &entries); err != nil {
			return err
		}
	}
	if err := pkg.put(list, append(entries, raw)); err != nil {
		return err
	}
	if err := packages.put(code, pkg); err != nil {
		return err
	}
	return doc.put("packages", packages)
}

// editDocument applies edit to the document at path, adds one to its
// sequence and writes it back indented by two spaces, with a final
// newline. Nothing is written unless the document passes Lint before the
// edit and after it; the problems are printed to stderr. It returns a
// line saying what the new document is.
func editDocument(path string, stderr io.Writer, edit func(*object) error) (string, error) {
	body, err := readCapped(path, maxDocument)
	if err != nil {
		return "", err
	}
	if problems := updatedoc.Lint(body); problems != nil {
		printProblems(stderr, path, problems, true)
		return "", fmt.Errorf("%s has %s: nothing changed; fix them first (upcheck publisher lint %s)", path, countProblems(len(problems)), path)
	}
	doc, err := parseObject(body)
	if err != nil {
		return "", err
	}
	var sequence int64
	seqRaw, _ := doc.get("sequence")
	if err := json.Unmarshal(seqRaw, &sequence); err != nil {
		return "", err
	}
	if err := edit(&doc); err != nil {
		return "", fmt.Errorf("%s: %w; nothing changed", path, err)
	}
	doc.set("sequence", json.RawMessage(strconv.FormatInt(sequence+1, 10)))
	out, err := formatDocument(doc)
	if err != nil {
		return "", err
	}
	if len(out) > maxDocument {
		return "", fmt.Errorf("%s: the result would be larger than %d bytes, which sites refuse: nothing changed", path, maxDocument)
	}
	if problems := updatedoc.Lint(out); problems != nil {
		printProblems(stderr, "", problems, false)
		return "", fmt.Errorf("%s: the result would have %s: nothing changed", path, countProblems(len(problems)))
	}
	if err := replaceFile(path, out); err != nil {
		return "", err
	}
	return fmt.Sprintf("sequence %d; sign it again before you upload it", sequence+1), nil
}

// formatDocument writes a document the way init does: members in their
// order, indented by two spaces, one final newline.
func formatDocument(doc object) ([]byte, error) {
	compact, err := marshal(doc)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, compact, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// replaceFile writes body to path through a new file in the same folder
// and a rename, so that the document is never seen half written; the
// file keeps its permissions.
func replaceFile(path string, body []byte) error {
	// A link stays a link: the file it points to is replaced.
	path, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(body)
	err = errors.Join(err, tmp.Chmod(info.Mode().Perm()), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
