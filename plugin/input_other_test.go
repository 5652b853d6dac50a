//go:build linux

package plugin

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

// TestOtherInput checks that the Input of input_other.go (built off Linux)
// has the Linux Input's TOML options, name, type and key each, so that a
// configuration parses on every system and only Init fails.
func TestOtherInput(t *testing.T) {
	var want []string
	var walk func(typ reflect.Type)
	walk = func(typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.Anonymous { // session.Options: its options are the input's
				walk(f.Type)
				continue
			}
			if key, ok := f.Tag.Lookup("toml"); ok && key != "-" {
				want = append(want, f.Name+" "+f.Type.String()+" "+key)
			}
		}
	}
	walk(reflect.TypeFor[Input]())
	file, err := parser.ParseFile(token.NewFileSet(), "input_other.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	ast.Inspect(file, func(n ast.Node) bool {
		spec, ok := n.(*ast.TypeSpec)
		if !ok || spec.Name.Name != "Input" {
			return true
		}
		for _, f := range spec.Type.(*ast.StructType).Fields.List {
			if f.Tag == nil {
				continue
			}
			tag, _ := strconv.Unquote(f.Tag.Value)
			key, ok := reflect.StructTag(tag).Lookup("toml")
			if !ok || key == "-" {
				continue
			}
			for _, name := range f.Names {
				got = append(got, name.Name+" "+types(f.Type)+" "+key)
			}
		}
		return false
	})
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("input_other.go's Input differs from input.go's in its TOML options (name type key): copy them over\nonly in input_other.go: %q\nonly in input.go:       %q",
			missing(got, want), missing(want, got))
	}
}

// types prints a field type of input_other.go as reflect does (they are
// basic types and slices of them).
func types(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.ArrayType:
		return "[]" + types(e.Elt)
	}
	return "?"
}

// missing lists the items of a that b lacks.
func missing(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}
