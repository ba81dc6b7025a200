package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/updatedoc"
)

// docs/publishing.md cannot rot: its shell blocks' upcheck commands run
// here, in order, in an empty folder, and must leave a document that
// parses, holds what the page added, and whose signature verifies with the
// public key init wrote. The page must walk through every command of the
// kit. Not parallel: the commands use the current folder, as on the page.
func TestPublishingWalkthroughRuns(t *testing.T) {
	page, err := os.ReadFile("../../docs/publishing.md")
	if err != nil {
		t.Fatal(err)
	}
	commands, err := shellBlockCommands(page)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	var ran []string
	for _, words := range commands {
		if words[0] != "upcheck" {
			continue // scp and the like: the upload
		}
		stdout, stderr, code := cliOut(t, nil, words[1:]...)
		if code != 0 {
			t.Fatalf("publishing.md: %q: exit %d\nstdout %s\nstderr %s", strings.Join(words, " "), code, stdout, stderr)
		}
		ran = append(ran, strings.Join(words[1:], " "))
	}
	for _, want := range []string{"publisher init", "publisher release add", "publisher advisory add", "publisher lint", "publisher sign"} {
		if !slices.ContainsFunc(ran, func(c string) bool { return strings.HasPrefix(c, want+" ") }) {
			t.Errorf("publishing.md does not run `upcheck %s`", want)
		}
	}

	body, err := os.ReadFile("updates.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := updatedoc.Parse(body)
	if err != nil {
		t.Fatalf("the walkthrough's document: %v", err)
	}
	blog := doc.Packages["blog"]
	if blog == nil || len(blog.Releases) != 1 || len(blog.Advisories) != 1 || doc.Sequence != 3 {
		t.Fatalf("the walkthrough's document: sequence %d, blog %+v", doc.Sequence, blog)
	}
	sig, err := os.ReadFile("updates.json.sig")
	if err != nil {
		t.Fatal(err)
	}
	pubText, err := os.ReadFile("publisher.pub")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := updatedoc.ParsePublicKey(strings.TrimSpace(string(pubText)))
	if err != nil {
		t.Fatal(err)
	}
	if err := updatedoc.Verify(body, strings.TrimSpace(string(sig)), pub); err != nil {
		t.Fatalf("the walkthrough's signature: %v", err)
	}
}

// shellBlockCommands returns the commands of the ```sh blocks of a
// Markdown page, each split into words as a POSIX shell would split it
// (quotes, backslashes, continued lines), without comments.
func shellBlockCommands(page []byte) ([][]string, error) {
	var out [][]string
	inBlock, pending := false, ""
	for sc := bufio.NewScanner(bytes.NewReader(page)); sc.Scan(); {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock && strings.TrimPrefix(line, "```") == "sh"
			continue
		}
		if !inBlock {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			pending += strings.TrimSuffix(line, `\`)
			continue
		}
		line, pending = pending+line, ""
		words, err := shellWords(line)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", line, err)
		}
		if len(words) > 0 {
			out = append(out, words)
		}
	}
	return out, nil
}

func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; {
		case ch == '#' && !inWord:
			i = len(line)
		case ch == ' ' || ch == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case ch == '\'' || ch == '"':
			end := strings.IndexByte(line[i+1:], ch)
			if end < 0 {
				return nil, fmt.Errorf("unterminated %c", ch)
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case ch == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		case ch == '$' || ch == '`' || ch == '|' || ch == ';' || ch == '&' || ch == '>' || ch == '<':
			return nil, fmt.Errorf("%c: the test runs commands without a shell; keep them plain", ch)
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
