package e2e

// README's promises about itself: its two commands are the ones the tests
// and CI run, and every link to a section of it (from --help, from error
// messages, from the docs) and every link in it and in docs/ leads somewhere.

import (
	"go/ast"
	"go/parser"
	"go/token"
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
	for _, f := range []string{"main.go", "help.go", "follow.go", "aggregator/log.go", "aggregator/catalog.go", "aggregator/catalog_names.go", "share.go", "aggregator/filter.go", "packaging/npm/mcp-simple-aggregator/bin/mcp-simple-aggregator.js"} {
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

// docPackages are the packages docs/architecture.md may name Go names of,
// by the name they are imported under, and their folders.
var docPackages = map[string]string{
	"aggregator": "aggregator", "server": "aggregator/internal/server",
	"eras": "aggregator/internal/eras", "capabilities": "aggregator/internal/capabilities",
	"naming": "aggregator/internal/naming", "shape": "aggregator/internal/shape",
	"uritemplate": "aggregator/internal/uritemplate", "inflight": "aggregator/internal/inflight",
	"lifetime": "aggregator/internal/lifetime", "output": "aggregator/internal/output",
	"config": "config", "stdio": "stdio", "jsonrpc": "jsonrpc", "printable": "internal/printable",
}

// TestArchitectureDocStaysTrue keeps docs/architecture.md a map that a
// move or a rename cannot make false unnoticed: every Go name it gives in
// backquotes as package.Name or package.Type.Member is declared in that
// package (a type, func, var or const; a method, a field or an interface's
// method of the type), it names no .go file, and it stays within 300 lines.
func TestArchitectureDocStaysTrue(t *testing.T) {
	doc := readRepoFile(t, "docs/architecture.md")
	if n := strings.Count(doc, "\n"); n > 300 {
		t.Errorf("docs/architecture.md has %d lines, more than 300: it is a map; details go beside the code", n)
	}
	if files := regexp.MustCompile(`[\w-]+\.go\b`).FindAllString(doc, -1); len(files) > 0 {
		t.Errorf("docs/architecture.md names files, which a move makes false: %q", files)
	}
	declared := map[string]map[string]bool{}
	goName := regexp.MustCompile("`([a-z]+)\\.([A-Za-z_]\\w*(?:\\.[A-Za-z_]\\w*)?)`")
	checked := 0
	for _, m := range goName.FindAllStringSubmatch(doc, -1) {
		dir, ok := docPackages[m[1]]
		if !ok {
			continue
		}
		if declared[dir] == nil {
			declared[dir] = declaredNames(t, dir)
		}
		checked++
		if !declared[dir][m[2]] {
			t.Errorf("docs/architecture.md names %s.%s, which %s does not declare: renamed? say it anew", m[1], m[2], dir)
		}
	}
	if checked == 0 {
		t.Error("docs/architecture.md gives no Go name this test can check: is the pattern still right?")
	}
}

// declaredNames are the package-level names of the package in dir (its
// files but tests, for every OS), and Type.Member for every method, field
// and interface method.
func declaredNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", filepath.FromSlash(dir), "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: %v, %d files", dir, err, len(files))
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names[d.Name.Name] = true
				} else {
					names[baseTypeName(d.Recv.List[0].Type)+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					case *ast.TypeSpec:
						names[s.Name.Name] = true
						var members []*ast.Field
						switch typ := s.Type.(type) {
						case *ast.StructType:
							members = typ.Fields.List
						case *ast.InterfaceType:
							members = typ.Methods.List
						}
						for _, m := range members {
							for _, n := range m.Names {
								names[s.Name.Name+"."+n.Name] = true
							}
							if len(m.Names) == 0 { // embedded
								names[s.Name.Name+"."+baseTypeName(m.Type)] = true
							}
						}
					}
				}
			}
		}
	}
	return names
}

// baseTypeName is the name of the type in a receiver or an embedded field:
// T of *T, pkg.T, T[P].
func baseTypeName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.SelectorExpr:
			return x.Sel.Name
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
