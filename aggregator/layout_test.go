package aggregator

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// eraFiles are the files that may ask which era a peer speaks: the
// adapter, and where a peer's era is settled: the client's by initialize
// (initialize.go; check.go stands for a legacy client) or by its first
// modern request (admitted in route.go, read in era.go and discover.go),
// a server's by its probe (child_start.go).
var eraFiles = []string{"adapter.go", "era.go", "discover.go", "route.go", "initialize.go", "check.go", "child_start.go"}

// TestErasMeetInTheAdapter fails when code outside eraFiles asks which era
// a peer speaks (a .modern field, an isModern method, eraModern or
// eraLegacy) instead of asking
// the peer's serverEra or clientEra what to do.
func TestErasMeetInTheAdapter(t *testing.T) {
	for file, uses := range eraQuestions(t) {
		if !slices.Contains(eraFiles, file) {
			t.Errorf("%s asks which era a peer speaks (%s): ask its era (adapter.go) instead", file, strings.Join(uses, ", "))
		}
	}
}

// eraQuestions finds, in every non-test file of the package, where it
// reads a .modern field, calls an isModern method or names eraModern or
// eraLegacy.
func eraQuestions(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	found := make(map[string][]string)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if n.Sel.Name == "modern" || n.Sel.Name == "isModern" {
					found[name] = append(found[name], fset.Position(n.Pos()).String())
				}
			case *ast.Ident:
				if n.Name == "eraModern" || n.Name == "eraLegacy" {
					found[name] = append(found[name], fset.Position(n.Pos()).String())
				}
			}
			return true
		})
	}
	return found
}

// TestChildGetsASmallHost fails when a child, or what it is given of the
// session (childHost), holds the whole Aggregator: a child reaches only
// what childHost names.
func TestChildGetsASmallHost(t *testing.T) {
	structs := map[string]*ast.StructType{}
	for _, file := range []string{"child.go", "child_host.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if st, ok := ts.Type.(*ast.StructType); ok {
					structs[ts.Name.Name] = st
				}
			}
			return true
		})
	}
	for _, name := range []string{"child", "childHost", "childSettings"} {
		st := structs[name]
		if st == nil {
			t.Fatalf("child.go and child_host.go declare no struct %s", name)
		}
		for _, field := range st.Fields.List {
			if typ := types(field.Type); strings.Contains(typ, "Aggregator") {
				t.Errorf("%s has a field of type %s: give it what it needs in childHost instead", name, typ)
			}
		}
	}
	if n := len(structs["childHost"].Fields.List); n > 8 {
		t.Errorf("childHost has %d fields: a child should need few things of the session", n)
	}
}

// types is a field's type as written (enough to find a name in it).
func types(e ast.Expr) string {
	var b strings.Builder
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			b.WriteString(id.Name + " ")
		}
		return true
	})
	return b.String()
}
