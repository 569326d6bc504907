package archtest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// exempt are the trees, relative to the module root, that are not engine
// packages: they may do I/O, read clocks and run goroutines.
var exempt = []string{"bench", "cmd", "examples", "internal/testkit"}

// forbiddenStd are standard-library packages engine code must not import,
// with their subpackages (net/http, sync/atomic, log/slog, os/exec, …).
var forbiddenStd = []string{"os", "net", "time", "sync", "log", "context"}

// allowedModules are the modules engine code may import besides the standard
// library and its own module (each with its subpackages).
var allowedModules = []string{"github.com/bits-and-blooms/bitset", "golang.org/x/exp"}

// under reports whether path is root or inside it ("a/b" is under "a", "ab"
// is not).
func under(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+"/")
}

// checkImport returns why engine code of module mod may not import path, or
// nil.
func checkImport(mod, path string) error {
	if under(path, mod) {
		return nil
	}
	first, _, _ := strings.Cut(path, "/")
	if path == "C" || strings.Contains(first, ".") { // not the standard library
		for _, m := range allowedModules {
			if under(path, m) {
				return nil
			}
		}
		return fmt.Errorf("imports %q: only the standard library, %s and %s are allowed",
			path, mod, strings.Join(allowedModules, ", "))
	}
	for _, f := range forbiddenStd {
		if under(path, f) {
			return fmt.Errorf("imports %q: engine packages do no I/O and read no clock (%s… are forbidden)",
				path, strings.Join(forbiddenStd, ", "))
		}
	}
	return nil
}

// checkFile parses the imports of one Go source file and returns a violation
// per forbidden import, as "file:line: …".
func checkFile(fset *token.FileSet, mod, name string, src []byte) ([]string, error) {
	f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, spec := range f.Imports {
		path, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			return nil, err
		}
		if err := checkImport(mod, path); err != nil {
			out = append(out, fmt.Sprintf("%s: %v", fset.Position(spec.Pos()), err))
		}
	}
	return out, nil
}

// checkModule walks the module at root (module path mod) and checks every
// non-test Go file of its engine packages. It returns the violations and the
// engine package directories it checked, relative to root, both sorted.
// Like the go command, it skips testdata, directories starting with "." or
// "_", and nested modules.
func checkModule(root, mod string) (violations, pkgs []string, err error) {
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			switch {
			case rel == ".":
				return nil
			case name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_"):
				return filepath.SkipDir
			case slices.ContainsFunc(exempt, func(e string) bool { return under(rel, e) }):
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		v, err := checkFile(fset, mod, rel, src)
		if err != nil {
			return err
		}
		violations = append(violations, v...)
		if dir := filepath.ToSlash(filepath.Dir(rel)); !slices.Contains(pkgs, dir) {
			pkgs = append(pkgs, dir)
		}
		return nil
	})
	slices.Sort(violations)
	slices.Sort(pkgs)
	return violations, pkgs, err
}

// moduleRoot walks up from the working directory to the directory holding
// go.mod and returns it with the module path.
func moduleRoot(t *testing.T) (root, mod string) {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			mod, err := modulePath(data)
			if err != nil {
				t.Fatalf("%s: %v", filepath.Join(dir, "go.mod"), err)
			}
			return dir, mod
		}
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// modulePath reads the module directive of a go.mod file.
func modulePath(gomod []byte) (string, error) {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			p := strings.TrimSpace(rest)
			if u, err := strconv.Unquote(p); err == nil {
				p = u
			}
			return p, nil
		}
	}
	return "", errors.New("no module directive")
}

// TestEngineImports enforces the import rule on this module.
func TestEngineImports(t *testing.T) {
	root, mod := moduleRoot(t)
	if mod != "github.com/blinksched/blink" {
		t.Fatalf("module %q", mod)
	}
	violations, pkgs, err := checkModule(root, mod)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pkgs, "topology") {
		t.Fatalf("checked %q, which misses topology: the walk is broken", pkgs)
	}
	t.Logf("engine packages checked: %s", strings.Join(pkgs, " "))
	for _, v := range violations {
		t.Error(v)
	}
}

func TestCheckImport(t *testing.T) {
	const mod = "github.com/blinksched/blink"
	allowed := []string{"fmt", "math/bits", "slices", "errors", "encoding/binary", "unsafe", "hash/fnv", "strings",
		mod, mod + "/topology", mod + "/internal/x",
		"github.com/bits-and-blooms/bitset", "golang.org/x/exp", "golang.org/x/exp/slices", "golang.org/x/exp/constraints"}
	forbidden := []string{"os", "os/exec", "net", "net/http", "net/netip", "time", "sync", "sync/atomic",
		"log", "log/slog", "context", "C",
		"github.com/stretchr/testify/require", "golang.org/x/sync/errgroup", "golang.org/x/expx",
		"github.com/bits-and-blooms/bitsetx", "github.com/bits-and-blooms/bloom/v3", mod + "x/topology",
		"example.com/m", "gopkg.in/yaml.v3"}
	for _, path := range allowed {
		if err := checkImport(mod, path); err != nil {
			t.Errorf("checkImport(%q) = %v, want allowed", path, err)
		}
	}
	for _, path := range forbidden {
		if checkImport(mod, path) == nil {
			t.Errorf("checkImport(%q) allowed it", path)
		}
	}
}

func TestCheckFile(t *testing.T) {
	src := []byte(`package bad

import (
	"fmt"
	"os"
	stdtime "time"
	_ "net/http/pprof"
	"github.com/bits-and-blooms/bitset"
	"github.com/pkg/errors"
)

func f() { fmt.Println(os.Args, stdtime.Now(), bitset.New(1), errors.New("x")) }
`)
	v, err := checkFile(token.NewFileSet(), "github.com/blinksched/blink", "bad/bad.go", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`bad/bad.go:5:2: imports "os"`, `bad/bad.go:6:2: imports "time"`,
		`bad/bad.go:7:2: imports "net/http/pprof"`, `bad/bad.go:9:2: imports "github.com/pkg/errors"`}
	if len(v) != len(want) {
		t.Fatalf("violations %q, want %d", v, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(v[i], want[i]) {
			t.Errorf("violation %d = %q, want prefix %q", i, v[i], want[i])
		}
	}
	if _, err := checkFile(token.NewFileSet(), "m", "broken.go", []byte("package x\nimport os\n")); err == nil {
		t.Error("a file that does not parse passed")
	}
}

// TestCheckModule runs the walk on a synthetic module: violations in engine
// packages are found; exempt trees, tests, testdata, hidden directories and
// nested modules are skipped.
func TestCheckModule(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"go.mod":                         "module example.com/m\n\ngo 1.26\n",
		"root.go":                        "package m\n",
		"engine/a.go":                    "package engine\n\nimport \"sync\"\n",
		"engine/b.go":                    "package engine\n\nimport \"example.com/m/engine/inner\"\n",
		"engine/a_test.go":               "package engine\n\nimport \"os\"\n",
		"engine/inner/c.go":              "package inner\n\nimport \"context\"\n",
		"engine/testdata/d.go":           "package d\n\nimport \"os\"\n",
		"engine/.hidden/e.go":            "package e\n\nimport \"os\"\n",
		"bench/f.go":                     "package bench\n\nimport \"time\"\n",
		"cmd/tool/g.go":                  "package main\n\nimport \"os\"\n",
		"examples/quick/h.go":            "package main\n\nimport \"os\"\n",
		"internal/testkit/i.go":          "package testkit\n\nimport \"os\"\n",
		"internal/testkitx/j.go":         "package testkitx\n\nimport \"log\"\n",
		"benchmarks/k.go":                "package benchmarks\n\nimport \"net\"\n",
		"nested/go.mod":                  "module example.com/nested\n",
		"nested/l.go":                    "package nested\n\nimport \"os\"\n",
		"engine/cmd/m.go":                "package cmd\n\nimport \"github.com/x/y\"\n",
		"engine/notgo.txt":               "import \"os\"\n",
		"internal/archtest/imports.go":   "package archtest\n\nimport \"golang.org/x/exp/maps\"\n",
		"internal/archtest/something.go": "package archtest\n\nimport \"github.com/bits-and-blooms/bitset\"\n",
	}
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(filepath.Join(root, "go.mod"))
	mod, err := modulePath(data)
	if err != nil || mod != "example.com/m" {
		t.Fatalf("modulePath = %q, %v", mod, err)
	}
	violations, pkgs, err := checkModule(root, mod)
	if err != nil {
		t.Fatal(err)
	}
	wantPkgs := []string{".", "benchmarks", "engine", "engine/cmd", "engine/inner", "internal/archtest", "internal/testkitx"}
	if !slices.Equal(pkgs, wantPkgs) {
		t.Errorf("checked %q, want %q", pkgs, wantPkgs)
	}
	var got []string
	for _, v := range violations {
		file, _, _ := strings.Cut(v, ":")
		got = append(got, file)
	}
	want := []string{"benchmarks/k.go", "engine/a.go", "engine/cmd/m.go", "engine/inner/c.go", "internal/testkitx/j.go"}
	if !slices.Equal(got, want) {
		t.Errorf("violations in %q, want %q:\n%s", got, want, strings.Join(violations, "\n"))
	}
}
