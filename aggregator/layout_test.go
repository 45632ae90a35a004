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

// eraFiles may ask which era a peer speaks anywhere: the adapter, and a
// modern client's requests and discover. Elsewhere only eraFuncs may:
// where a peer's era is settled, the client's by initialize (Check stands
// for a legacy client) or as its first request is admitted (refuse), a
// server's by its probe (discover).
var (
	eraFiles = []string{"adapter.go", "era.go", "discover.go"}
	eraFuncs = []string{"initialize.go:acceptInitialize", "check.go:Check", "route.go:refuse", "child_start.go:discover"}
)

// TestErasMeetInTheAdapter fails when code outside eraFiles and eraFuncs
// asks which era a peer speaks (reads a .modern field, calls isModern,
// names eraModern or eraLegacy, or one of the adapter's era types) instead
// of asking the peer's serverEra or clientEra what to do.
func TestErasMeetInTheAdapter(t *testing.T) {
	t.Parallel()
	for where, uses := range eraQuestions(t) {
		file, _, _ := strings.Cut(where, ":")
		if !slices.Contains(eraFiles, file) && !slices.Contains(eraFuncs, where) {
			t.Errorf("%s asks which era a peer speaks (%s): ask its era (adapter.go) instead", where, strings.Join(uses, ", "))
		}
	}
}

// eraQuestion are the names that ask which era a peer speaks.
var eraQuestion = map[string]bool{
	"modern": true, "isModern": true, "eraModern": true, "eraLegacy": true,
	"modernServer": true, "legacyServer": true, "modernClient": true, "legacyClient": true,
}

// eraQuestions finds, in every non-test file of the package, the
// functions (file:func, or file: outside any) that use an eraQuestion
// name.
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
		for _, decl := range f.Decls {
			where := name + ":"
			if fn, ok := decl.(*ast.FuncDecl); ok {
				where += fn.Name.Name
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				var id *ast.Ident
				switch n := n.(type) {
				case *ast.Field: // a declaration (child.modern), not a question
					return false
				case *ast.SelectorExpr:
					id = n.Sel
				case *ast.Ident:
					id = n
				}
				if id != nil && eraQuestion[id.Name] {
					found[where] = append(found[where], fset.Position(id.Pos()).String())
				}
				return true
			})
		}
	}
	return found
}

// TestChildGetsASmallHost fails when a child, what it is given of the
// session (childHost), or an exchange (which a child's reader drives)
// holds the whole Aggregator, or when a method of a child names it: a
// child reaches the session only through childHost.
func TestChildGetsASmallHost(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	structs := map[string]*ast.StructType{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeSpec:
				if st, ok := n.Type.(*ast.StructType); ok {
					structs[n.Name.Name] = st
				}
			case *ast.FuncDecl:
				if n.Recv != nil && strings.Contains(identsIn(n.Recv), "child ") && strings.Contains(identsIn(n), "Aggregator ") {
					t.Errorf("%s: method %s of a child names the Aggregator: give the child what it needs in childHost", name, n.Name.Name)
				}
			}
			return true
		})
	}
	for _, name := range []string{"child", "childHost", "childSettings", "exchange"} {
		st := structs[name]
		if st == nil {
			t.Fatalf("the package declares no struct %s", name)
		}
		for _, field := range st.Fields.List {
			if typ := identsIn(field.Type); strings.Contains(typ, "Aggregator ") {
				t.Errorf("%s has a field of type %s: give it what it needs in childHost instead", name, typ)
			}
		}
	}
	if n := len(structs["childHost"].Fields.List); n > 8 {
		t.Errorf("childHost has %d fields: a child should need few things of the session", n)
	}
}

// identsIn lists the identifiers in n, each followed by a space.
func identsIn(n ast.Node) string {
	var b strings.Builder
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			b.WriteString(id.Name + " ")
		}
		return true
	})
	return b.String()
}
