package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/upcheck/upcheck/internal/updatedoc"
)

// runLint is `publisher lint DOCUMENT`: every problem upcheck would refuse
// the document for, one a line, or one "ok" line.
func runLint(args []string, stdout, stderr io.Writer) error {
	rest, err := parseFlags("publisher lint", args, stderr, func(*flag.FlagSet) {})
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		fmt.Fprintln(stderr, "upcheck publisher lint: want exactly one DOCUMENT")
		return errUsage
	}
	path := rest[0]
	body, err := readCapped(path, maxDocument)
	if err != nil {
		return err
	}
	if problems := updatedoc.Lint(body); problems != nil {
		printProblems(stdout, path, problems, true)
		return fmt.Errorf("%s has %s", path, countProblems(len(problems)))
	}
	doc, err := updatedoc.Parse(body)
	if err != nil {
		return err // Lint found nothing, so Parse cannot fail; but never print "ok" past an error
	}
	expires := "no expiry"
	if !doc.Expires.IsZero() {
		expires = "expires " + doc.Expires.UTC().Format("2006-01-02T15:04:05Z")
	}
	_, err = fmt.Fprintf(stdout, "%s: ok (publisher %q, sequence %d, %d packages, %s)\n",
		path, doc.Publisher, doc.Sequence, len(doc.Packages), expires)
	return err
}

// printProblems writes one problem a line, as a compiler would:
// FILE:LINE:COLUMN: PATH: message (without the "update document:" that
// the checker puts before each). With places false (the problems of a
// document that was not written) only the path says where.
func printProblems(w io.Writer, file string, problems []updatedoc.Problem, places bool) {
	for _, p := range problems {
		var where []string
		if file != "" {
			where = append(where, file)
		}
		if places && p.Line > 0 {
			where = append(where, fmt.Sprint(p.Line), fmt.Sprint(p.Column))
		}
		prefix := strings.Join(where, ":")
		if prefix != "" {
			prefix += ": "
		}
		if p.Path != "" {
			prefix += p.Path + ": "
		}
		fmt.Fprintf(w, "%s%s\n", prefix, strings.TrimPrefix(p.Message, "update document: "))
	}
}

func countProblems(n int) string {
	if n == 1 {
		return "1 problem"
	}
	return fmt.Sprintf("%d problems", n)
}
