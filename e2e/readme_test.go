package e2e

// README's promises about itself: its two commands are the ones the tests
// and CI run, and every link to a section of it (from --help, from error
// messages, from the docs) and every link in it and in docs/ leads somewhere.

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// testCommand runs every test; README's "Try it" gives it verbatim and
// .ci/run runs it.
const testCommand = "go test -race -count=1 ./..."

// readRepoFile reads a file of the repository by its slash path.
func readRepoFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// markdownSection returns the lines of the section of md under heading,
// up to the next heading of any level.
func markdownSection(t *testing.T, md, heading string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(md, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("no section %q", heading)
	}
	var lines []string
	for _, l := range strings.Split(rest, "\n") {
		if strings.HasPrefix(l, "#") {
			break
		}
		lines = append(lines, l)
	}
	return lines
}

func TestREADMECommands(t *testing.T) {
	var commands []string
	for _, l := range markdownSection(t, readRepoFile(t, "README.md"), "## Try it") {
		if c, ok := strings.CutPrefix(l, "    "); ok {
			commands = append(commands, c)
		}
	}
	if want := []string{demoCommand, testCommand}; !slices.Equal(commands, want) {
		t.Errorf("README's Try it gives the commands %q, want %q (the demo TestDemo runs, the tests .ci/run runs)", commands, want)
	}
	ci := strings.Split(readRepoFile(t, ".ci/run"), "\n")
	if !slices.Contains(ci, testCommand) {
		t.Errorf(".ci/run has no line %q", testCommand)
	}
}

// anchor is the id GitHub gives a heading: lower case, punctuation but
// - and _ dropped, spaces made -.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the ids of the headings of a markdown text (outside
// code blocks).
func anchors(md string) map[string]bool {
	ids := map[string]bool{}
	fenced := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		if h := strings.TrimLeft(l, "#"); !fenced && h != l && strings.HasPrefix(h, " ") {
			ids[anchor(strings.TrimSpace(h))] = true
		}
	}
	return ids
}

// readmeRef finds README.md#section in messages and docs, and the
// sections main's errors name (readme("section"), explained(err, "section")).
var readmeRef = regexp.MustCompile(`README\.md#([A-Za-z0-9_-]+)|(?:readme\(|explained\([^,()]+, )"([^"]*)"`)

// mdLink finds the target of a markdown link: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

func TestREADMEAnchors(t *testing.T) {
	readme := anchors(readRepoFile(t, "README.md"))
	help := runToExit(t, nil, "", "--help")
	sources := map[string]string{"--help": help.stdout}
	for _, f := range []string{"main.go", "help.go", "follow.go", "aggregator/log.go", "aggregator/clients.go", "aggregator/filter.go", "packaging/npm/mcp-simple-aggregator/bin/mcp-simple-aggregator.js"} {
		sources[f] = readRepoFile(t, f)
	}
	for name, text := range sources {
		refs := readmeRef.FindAllStringSubmatch(text, -1)
		if least := map[string]int{"--help": 4, "main.go": 4, "help.go": 1}[name]; len(refs) < least {
			t.Errorf("%s points to %d README sections, want %d at least", name, len(refs), least)
		}
		for _, m := range refs {
			if section := m[1] + m[2]; !readme[section] {
				t.Errorf("%s points to README.md#%s: README has no such section", name, section)
			}
		}
	}

	// Every relative link of README and docs/ leads to a file, and to a
	// heading of it when it names one.
	docs, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs/*.md: %v, %d files", err, len(docs))
	}
	files := []string{"README.md", "packaging/README.md"}
	for _, d := range docs {
		files = append(files, "docs/"+filepath.Base(d))
	}
	for _, f := range files {
		for _, m := range mdLink.FindAllStringSubmatch(readRepoFile(t, f), -1) {
			target, frag, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") {
				continue
			}
			path := f
			if target != "" {
				path = filepath.ToSlash(filepath.Join(filepath.Dir(f), target))
			}
			if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(path))); err != nil {
				t.Errorf("%s links to %s: %v", f, m[1], err)
				continue
			}
			if frag != "" && !anchors(readRepoFile(t, path))[frag] {
				t.Errorf("%s links to %s: %s has no heading #%s", f, m[1], path, frag)
			}
		}
	}
}

// README is for users: it stays within 450 lines (details go to docs/),
// and no client example runs the npm package, which is not published:
// `npx -y` would run whatever anyone publishes under its name first.
func TestREADMEIsShortAndShowsWhatWorks(t *testing.T) {
	readme := readRepoFile(t, "README.md")
	if n := strings.Count(readme, "\n"); n > 450 {
		t.Errorf("README.md has %d lines, more than 450: move details to docs/", n)
	}
	for _, l := range markdownSection(t, readme, "## Use it from your client") {
		if strings.Contains(l, `"-y", "mcp-simple-aggregator"`) || strings.Contains(l, "npx -y mcp-simple-aggregator") {
			t.Errorf("a client example runs the unpublished npm package: %s", l)
		}
	}
}
