package npm

import (
	"strings"
	"testing"
	"time"
)

// A dependency's spec names a source outside the registry by its form
// alone; a range, a tag, an npm: alias and a scoped name are the
// registry's.
func TestSourceOf(t *testing.T) {
	t.Parallel()
	for spec, want := range map[string]string{
		"^1.2.3": "", "latest": "", "npm:other@^1": "", "1.x || >=2.5.0": "", "": "",
		"git+https://git.example.test/a/b.git": SourceGit, "git://git.example.test/a/b": SourceGit,
		"git@git.example.test:a/b.git": SourceGit, "gitlab:a/b": SourceGit, "bitbucket:a/b": SourceGit, "gist:11081aaa": SourceGit,
		"github:tanstack/router#0abc": SourceGitHub, "tanstack/router": SourceGitHub, "user/repo#semver:^1": SourceGitHub,
		"https://files.example.test/x-1.0.0.tgz": SourceTarball, "http://files.example.test/x.tgz": SourceTarball,
		"file:../local": SourceFile, "link:../x": SourceFile, "./vendor/x": SourceFile,
	} {
		if got := SourceOf(spec); got != want {
			t.Errorf("SourceOf(%q) = %q, want %q", spec, got, want)
		}
	}
}

// A script's text is kept cut at MaxScript bytes, at a character, with
// the hash of the whole text: two texts that differ past the cut differ.
func TestScriptOfCutsAndHashesTheWholeText(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", MaxScript) // two bytes each
	s := ScriptOf(long)
	if !s.Cut || len(s.Text) > MaxScript || !strings.HasPrefix(long, s.Text) || len(s.SHA256) != 64 {
		t.Errorf("cut %v, %d bytes kept, hash %q", s.Cut, len(s.Text), s.SHA256)
	}
	if other := ScriptOf(long + "x"); other.Text != s.Text || other.SHA256 == s.SHA256 {
		t.Error("a change past the cut is not seen in the hash")
	}
	if short := ScriptOf("node setup.js"); short.Cut || short.Text != "node setup.js" {
		t.Errorf("a short script: %+v", short)
	}
}

// A burst counts the versions published within one window holding the
// version's own publish time; versions a day apart are no burst.
func TestBurst(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 11, 12, 0, 0, 0, time.UTC)
	pkg := &Package{Published: map[string]time.Time{
		"1.0.0": at.Add(-48 * time.Hour), "1.0.1": at.Add(-50 * time.Minute), "1.0.2": at.Add(-10 * time.Minute),
		"1.0.3": at, "1.0.4": at.Add(5 * time.Minute), "1.0.5": at.Add(70 * time.Minute), "1.0.6": at.Add(24 * time.Hour),
	}}
	if got := burst(pkg, "1.0.3"); got != 4 { // 1.0.1–1.0.4 within the hour from 1.0.1
		t.Errorf("burst of 1.0.3: %d, want 4", got)
	}
	if got := burst(pkg, "1.0.6"); got != 1 {
		t.Errorf("burst of 1.0.6: %d, want 1", got)
	}
	if got := burst(pkg, "9.9.9"); got != 0 {
		t.Errorf("burst of an untimed version: %d", got)
	}
}
