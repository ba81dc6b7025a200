package main

import (
	"fmt"
	"io"
	"strings"
)

// wantsHelp reports whether a subcommand's arguments ask for help, in any
// of the spellings the flag package accepts, before a "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--h", "-help", "--help":
			return true
		}
	}
	return false
}

// printHelp answers `upcheck CMD [SUB…] --help`: the entries of the usage
// text for that command (all of its subcommands when none is named, or
// when the one named is unknown), and the paragraphs about it, such as the
// exit codes of check, on stdout; exit 0. It needs no configuration and no
// database, so help works whatever the environment. An unknown command is
// a usage mistake, as without --help.
func printHelp(cmd string, rest []string, stdout, stderr io.Writer) error {
	path := []string{cmd}
	for _, a := range rest {
		if strings.HasPrefix(a, "-") {
			break
		}
		path = append(path, a)
	}
	entries, paragraphs := usageParts()
	for n := len(path); n > 0; n-- {
		prefix := "upcheck " + strings.Join(path[:n], " ")
		var found []string
		for _, e := range entries {
			if first := strings.TrimSpace(strings.SplitN(e, "\n", 2)[0]); first == prefix || strings.HasPrefix(first, prefix+" ") {
				found = append(found, e)
			}
		}
		if len(found) == 0 {
			continue
		}
		fmt.Fprintf(stdout, "Usage:\n%s\n", strings.Join(found, "\n"))
		for _, p := range paragraphs {
			if strings.HasPrefix(p, "Exit codes of "+cmd+":") {
				fmt.Fprintf(stdout, "\n%s\n", p)
			}
		}
		fmt.Fprint(stdout, "\nAll commands: upcheck help. The environment: README.md.\n")
		return nil
	}
	fmt.Fprintf(stderr, "upcheck: unknown command %q\n%s", cmd, helpPointer(""))
	return errUsage
}

// helpPointer is the line that follows a command-line mistake on stderr:
// where the usage of cmd ("" for the whole program) is. A mistake is told
// in one line and this one, never with the whole usage text after it.
func helpPointer(cmd string) string {
	if cmd == "" {
		return "Run \"upcheck help\" for the list of commands.\n"
	}
	return "Run \"upcheck help " + cmd + "\" for its usage.\n"
}

// usageParts splits the usage text into its command entries (a line
// "  upcheck …" and the lines indented under it) and the paragraphs after
// the list.
func usageParts() (entries, paragraphs []string) {
	_, tail, _ := strings.Cut(usage, "\nUsage:\n")
	list, after, _ := strings.Cut(tail, "\n\n")
	for _, line := range strings.Split(list, "\n") {
		if strings.HasPrefix(line, "  upcheck ") || len(entries) == 0 {
			entries = append(entries, line)
			continue
		}
		entries[len(entries)-1] += "\n" + line
	}
	for _, p := range strings.Split(after, "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			paragraphs = append(paragraphs, p)
		}
	}
	return entries, paragraphs
}
