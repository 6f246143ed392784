package lockcheck_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// checkedDirs are the packages whose …Locked functions must check their
// lock: every package of the root module that has any, and durable's
// (a module of its own, in this repository).
var checkedDirs = []string{".", "clock", "cron", "cron/claimtest", "expiry", "idleconn", "loop", "queue", "wheelctx", "internal/*", "durable", "durable/internal/*"}

// TestEveryLockedFunctionChecks: every function named …Locked in
// checkedDirs starts with a lock check, or its doc says that its
// callers' checks cover it (one that cannot reach its lock).
func TestEveryLockedFunctionChecks(t *testing.T) {
	n := 0
	for _, pattern := range checkedDirs {
		files, err := filepath.Glob(filepath.Join("..", "..", pattern, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || !strings.HasSuffix(fd.Name.Name, "Locked") {
					continue
				}
				n++
				if !startsWithCheck(fd) && !strings.Contains(strings.Join(strings.Fields(fd.Doc.Text()), " "), "callers' lock checks cover") {
					t.Errorf("%s: %s neither checks its lock (lockcheck.Held or WriteHeld first) nor says its callers' lock checks cover it", path, fd.Name.Name)
				}
			}
		}
	}
	if n < 40 {
		t.Fatalf("found %d …Locked functions; the walk missed the packages", n)
	}
}

// startsWithCheck reports whether fd's first statement is a call of
// lockcheck.Held or lockcheck.WriteHeld.
func startsWithCheck(fd *ast.FuncDecl) bool {
	if fd.Body == nil || len(fd.Body.List) == 0 {
		return false
	}
	es, ok := fd.Body.List[0].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "lockcheck" && (sel.Sel.Name == "Held" || sel.Sel.Name == "WriteHeld")
}
