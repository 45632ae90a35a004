package server

import (
	"bytes"
	"flag"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAPI keeps the package's exported surface in testdata/api.txt, as Go
// keeps api/: every exported type (an embedded one named, its members not
// repeated), field, func and method with its signature, and the names of
// its consts and vars, one a line. A change to what the session may use
// of a server shows in the diff of that file (go test -update rewrites
// it).
func TestAPI(t *testing.T) {
	checkGolden(t, "testdata/api.txt", []byte(strings.Join(exported(t), "\n")+"\n"))
}

// exported lists the exported declarations of the package's files.
func exported(t *testing.T) []string {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	expr := func(e ast.Expr) string {
		var b strings.Builder
		printer.Fprint(&b, fset, e)
		return b.String()
	}
	var api []string
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				sig := strings.TrimPrefix(expr(d.Type), "func")
				if d.Recv != nil {
					recv := expr(d.Recv.List[0].Type)
					if !ast.IsExported(strings.TrimPrefix(recv, "*")) {
						continue
					}
					api = append(api, "method ("+recv+") "+d.Name.Name+sig)
					continue
				}
				api = append(api, "func "+d.Name.Name+sig)
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						api = append(api, typeAPI(s, expr)...)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								api = append(api, d.Tok.String()+" "+n.Name)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(api)
	return api
}

// typeAPI is a type's line, and a line for each exported field or
// interface method.
func typeAPI(s *ast.TypeSpec, expr func(ast.Expr) string) []string {
	var members *ast.FieldList
	kind := expr(s.Type)
	switch t := s.Type.(type) {
	case *ast.StructType:
		members, kind = t.Fields, "struct"
	case *ast.InterfaceType:
		members, kind = t.Methods, "interface"
	}
	lines := []string{"type " + s.Name.Name + " " + kind}
	if members == nil {
		return lines
	}
	for _, f := range members.List {
		if len(f.Names) == 0 { // embedded
			lines = append(lines, "type "+s.Name.Name+" "+kind+", embedded "+expr(f.Type))
			continue
		}
		for _, n := range f.Names {
			if n.IsExported() {
				typ := expr(f.Type)
				if kind == "interface" {
					typ = strings.TrimPrefix(typ, "func")
				}
				lines = append(lines, "type "+s.Name.Name+" "+kind+", "+n.Name+" "+typ)
			}
		}
	}
	return lines
}

// update has the golden files in testdata rewritten (go test -update).
var update = flag.Bool("update", false, "rewrite the golden files in testdata with what the tests produce")

// checkGolden fails t when got differs from the file at path; with -update
// it writes got to path.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the code gives (go test -update rewrites it):\n%s", path, got)
	}
}
