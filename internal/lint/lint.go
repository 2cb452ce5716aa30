package lint

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Limits on sizes.
const (
	MaxFileLines = 600
	MaxFuncLines = 100
)

// File is one parsed Go file of a module.
type File struct {
	Dir  string // the package's directory, relative to the module root, "." for the root
	Name string
	Test bool
	Fset *token.FileSet
	AST  *ast.File
}

// Load parses every Go file under root, skipping testdata and hidden
// directories.
func Load(root string) ([]File, error) {
	var out []File
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		out = append(out, File{Dir: filepath.ToSlash(rel), Name: d.Name(), Test: strings.HasSuffix(p, "_test.go"), Fset: fset, AST: f})
		return nil
	})
	return out, err
}

func (f File) path() string { return path.Join(f.Dir, f.Name) }

// DocFiles reports the packages (directories with non-test Go files) that
// have no doc.go.
func DocFiles(files []File) []string {
	pkgs, docs := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		if !f.Test {
			pkgs[f.Dir] = true
			docs[f.Dir] = docs[f.Dir] || f.Name == "doc.go"
		}
	}
	var out []string
	for d := range pkgs {
		if !docs[d] {
			out = append(out, d+": no doc.go")
		}
	}
	sort.Strings(out)
	return out
}

// Sizes reports the non-test files over MaxFileLines lines and the
// functions over MaxFuncLines, but for those named in except (a file's
// path, or path:function).
func Sizes(files []File, except map[string]bool) []string {
	var out []string
	for _, f := range files {
		if f.Test {
			continue
		}
		tf := f.Fset.File(f.AST.Pos())
		if n := tf.LineCount(); n > MaxFileLines && !except[f.path()] {
			out = append(out, fmt.Sprintf("%s: %d lines, more than %d", f.path(), n, MaxFileLines))
		}
		for _, d := range f.AST.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := f.Fset.Position(fd.End()).Line - f.Fset.Position(fd.Pos()).Line + 1
			if n > MaxFuncLines && !except[f.path()+":"+fd.Name.Name] {
				out = append(out, fmt.Sprintf("%s: func %s is %d lines, more than %d", f.path(), fd.Name.Name, n, MaxFuncLines))
			}
		}
	}
	return out
}

// GoStatements reports go statements in non-test files outside the
// directories allowed (a directory and everything under it) and the
// files in except.
func GoStatements(files []File, allowed []string, except map[string]bool) []string {
	var out []string
	for _, f := range files {
		if f.Test || except[f.path()] || under(f.Dir, allowed) {
			continue
		}
		ast.Inspect(f.AST, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok {
				out = append(out, fmt.Sprintf("%s: a go statement; start loops as runtime services", f.Fset.Position(g.Pos())))
			}
			return true
		})
	}
	return out
}

func under(dir string, roots []string) bool {
	for _, r := range roots {
		if dir == r || strings.HasPrefix(dir, r+"/") {
			return true
		}
	}
	return false
}

// impure are the calls and types a pure package may not use, by package
// path and name ("" name: any).
var impure = map[string]map[string]bool{
	"time": {"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true, "AfterFunc": true,
		"NewTimer": true, "NewTicker": true, "Tick": true},
	"sync": {"": true},
	"net":  {"Dial": true, "DialTimeout": true, "DialTCP": true, "DialUDP": true, "Listen": true, "ListenTCP": true, "ListenUDP": true, "ListenPacket": true},
	"os": {"Open": true, "OpenFile": true, "Create": true, "CreateTemp": true, "ReadFile": true, "WriteFile": true,
		"ReadDir": true, "Remove": true, "RemoveAll": true, "Mkdir": true, "MkdirAll": true, "Rename": true},
}

// Pure reports, in the non-test files of the pure directories, go
// statements and uses of the clock, locks, files and sockets.
func Pure(files []File, pure []string) []string {
	var out []string
	for _, f := range files {
		if f.Test || !under(f.Dir, pure) {
			continue
		}
		names := map[string]string{} // local name -> import path
		for _, im := range f.AST.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			name := path.Base(p)
			if im.Name != nil {
				name = im.Name.Name
			}
			names[name] = p
		}
		ast.Inspect(f.AST, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.GoStmt:
				out = append(out, fmt.Sprintf("%s: a go statement in a pure package", f.Fset.Position(x.Pos())))
			case *ast.SelectorExpr:
				id, ok := x.X.(*ast.Ident)
				if !ok {
					break
				}
				banned := impure[names[id.Name]]
				if banned != nil && (banned[""] || banned[x.Sel.Name]) {
					out = append(out, fmt.Sprintf("%s: %s.%s in a pure package", f.Fset.Position(x.Pos()), names[id.Name], x.Sel.Name))
				}
			}
			return true
		})
	}
	return out
}

// Imports reports the non-test files of dir (not below it) that import a
// path starting with one of banned.
func Imports(files []File, dir string, banned []string) []string {
	var out []string
	for _, f := range files {
		if f.Test || f.Dir != dir {
			continue
		}
		for _, im := range f.AST.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			for _, b := range banned {
				if strings.HasPrefix(p, b) {
					out = append(out, fmt.Sprintf("%s: imports %s", f.path(), p))
				}
			}
		}
	}
	return out
}

// moduleRoot finds the directory of go.mod above dir.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
	}
}
