//go:build linux

package fsio

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// openAccounts lists every call in the repository's non-test Go source that
// opens a file or directory other than through OpenUserFile, OpenUserDir
// and ReadUserFile, keyed "path func call", with why that file is not one
// another user controls (userfile.go). A new open elsewhere fails
// TestEveryOpenIsAccountedFor until it goes through the opener or is
// listed here with its reason.
var openAccounts = map[string]string{
	// The opener itself.
	"procwalk/internal/fsio/userfile.go openRetry syscall.Open":      "the opener: O_PATH|O_NOFOLLOW, then the checked reopen",
	"procwalk/internal/fsio/userfile.go ReadUserFileIn unix.Openat2": "the opener: O_PATH, RESOLVE_IN_ROOT, then the checked reopen",
	// /proc and cgroupfs: the kernel's files (a fixture root is the
	// operator's), opened O_NONBLOCK; their reads are bounded by deadline.go.
	"procwalk/snapshot.go Scanner.ReadMore syscall.Open":                    "the --proc root directory, the operator's",
	"procwalk/snapshot.go Scanner.ReadProcesses syscall.Open":               "the --proc root directory, the operator's",
	"procwalk/snapshot.go Scanner.countFDs fsio.Openat":                     "/proc/PID/fd, O_NONBLOCK",
	"procwalk/snapshot.go Scanner.read fsio.Openat":                         "a /proc/PID file, O_NONBLOCK",
	"procwalk/environ.go FS.ReadPIDFile syscall.Open":                       "a /proc/PID file, O_NONBLOCK",
	"procwalk/fs.go readFile syscall.Open":                                  "a /proc file, O_NONBLOCK",
	"procwalk/session/agent_bind.go Grouper.openFiles syscall.Open":         "/proc/PID/fd, O_NONBLOCK",
	"procwalk/fs.go NewFS os.ReadDir":                                       "the --proc root the operator named, listed to explain an error",
	"procwalk/bpfsource/source.go Source.listPids unix.Open":                "the /proc root directory",
	"procwalk/bpfsource/source.go boottimeOffset os.ReadFile":               "/proc/self/timens_offsets",
	"procwalk/bpfsource/source.go identityUIDs os.ReadFile":                 "/proc/self/uid_map",
	"procwalk/frame/binary_pages.go readSelfSmaps os.Open":                  "/proc/self/smaps: procwalk's own mappings",
	"procwalk/bpfsource/source.go possibleCPUs os.ReadFile":                 "/sys/devices/system/cpu/possible",
	"procwalk/kill/scope_actions.go cgroupLists filepath.WalkDir":           "a cgroupfs directory: no FIFO can be made there",
	"procwalk/kill/scope_actions.go execution.freezeCgroup os.ReadFile":     "cgroup.events of cgroupfs",
	"procwalk/session/cgroup_walk.go cgroupWalk.readProcs fsio.Openat":      "cgroup.procs of cgroupfs, O_NONBLOCK",
	"procwalk/session/cgroup_walk.go cgroupWalk.readSmall syscall.Open":     "a cgroupfs control file, O_NONBLOCK",
	"procwalk/session/cgroup_walk.go cgroupWalk.walkHierarchy fsio.Openat":  "a cgroupfs directory, O_NONBLOCK",
	"procwalk/session/cgroup_walk.go cgroupWalk.walkHierarchy syscall.Open": "a cgroupfs hierarchy's top directory",
	"procwalk/session/cgroupfs.go cgroupFS.readFile syscall.Open":           "a cgroupfs control file (O_NONBLOCK: a FIFO planted in a fake tree does not block)",
	"procwalk/session/agent_cmdline.go addressesRandomised os.ReadFile":     "sys/kernel/randomize_va_space under the procfs root: the kernel's",
	"scripting/worker_cgroup.go memoryCgroup.oomKills os.ReadFile":          "memory.events of procwalk's own worker cgroup",
	"scripting/worker_cgroup.go newMemoryCgroup os.ReadFile":                "cgroup.subtree_control of procwalk's own cgroup",
	// Root's files and the operator's own, named in flags or config.
	"procwalk/passwd.go Users.read os.Open":            "/etc/passwd, root's",
	"procwalk/session/group.go LoadGroupRules os.Open": "the --groups file, the operator's",
	"scripting/runtime.go LoadFile os.Open":            "the Lua script the operator runs",
	"procwalk/session/tmux.go tmuxDirs syscall.Open":   "lists $TMUX_TMPDIR (/tmp, root's) for tmux-* names; each is opened with OpenUserDir",
	// gopher-lua's loaders, which the sandbox strips (scripting/sandbox).
	"scripting/internal/_luavm/auxlib.go LState.LoadFile os.Open": "upstream's loadfile: stripped from the sandbox",
	"scripting/internal/_luavm/baselib.go baseLoadFile os.Open":   "upstream's loadfile: stripped from the sandbox",
	"scripting/internal/_luavm/iolib.go newFile os.OpenFile":      "upstream's io library: not opened in the sandbox",
	// Added by others' landings: the kernel's files, procwalk's own
	// cgroups, and the operator's files.
	"procwalk/snapshot.go Scanner.readRootInto syscall.Open":               "the --proc root directory, the operator's",
	"procwalk/cgroup_self.go FS.OwnCgroup os.ReadDir":                      "the parent of procwalk's own cgroup, in cgroupfs",
	"procwalk/kill/scope_actions.go execution.cgroupLeft filepath.WalkDir": "a cgroupfs directory: no FIFO can be made there",
	"procwalk/kill/scope_actions.go readCgroupProcs os.ReadFile":           "cgroup.procs of cgroupfs",
	"procwalk/kill/sentinel.go heldSet.resume unix.Openat":                 "cgroup.freeze of a cgroupfs directory, for writing",
	"procwalk/kill/sentinel.go parentGone os.ReadFile":                     "/proc/PID/stat of procwalk's parent",
	"procwalk/kill/sentinel.go sentinelHold.cgroup unix.Open":              "a cgroupfs directory, O_PATH",
	"procwalk/kill/supervise_cpu.go cpuCgroup.cpuSeconds os.ReadFile":      "cpu.stat of procwalk's own cgroup",
	"procwalk/kill/supervise_cpu.go newCPUCgroup os.ReadFile":              "/proc/self/cgroup",
	"procwalk/kill/supervise_cpu.go newCPUCgroup unix.Open":                "procwalk's own cgroup directory, O_PATH",
	"procwalk/recording/recording.go Open os.Open":                         "a recording the operator names (replay)",
	"cmd/procwalk/record.go recordCommand.exec os.Create":                  "the recording file the operator names, created",
	"scripting/ruletest/run.go RunFile os.ReadFile":                        "a rule test file the operator names",
	"scripting/ruletest/run.go Files filepath.Glob":                        "the rule tests the operator names",
	"cmd/procwalk/topcmd.go keyboard os.OpenFile":                          "/dev/tty, procwalk's own controlling terminal (top's keys)",
}

// openCalls are the functions that open a file or directory by path.
var openCalls = map[string][]string{
	"os":                    {"Open", "OpenFile", "ReadFile", "Create", "ReadDir", "OpenRoot", "OpenInRoot", "DirFS"},
	"io/ioutil":             {"ReadFile", "ReadDir"},
	"syscall":               {"Open", "Openat"},
	"golang.org/x/sys/unix": {"Open", "Openat", "Openat2"},
	"path/filepath":         {"Walk", "WalkDir", "Glob"},
	"github.com/procwalk/procwalk/procwalk/internal/fsio": {"Openat"},
}

// Every open of a file or directory in the repository's code goes through
// the opener of files other users control, or is listed in openAccounts
// with why its file is not one; a listed open that no longer exists is an
// error too, so the list says what the code does.
func TestEveryOpenIsAccountedFor(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root %s: %v", root, err)
	}
	found := map[string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || n == ".git" || strings.HasPrefix(n, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, key := range fileOpens(f, filepath.ToSlash(rel)) {
			found[key] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range slices.Sorted(maps.Keys(found)) {
		if _, ok := openAccounts[key]; !ok {
			t.Errorf("%s opens a file another way than fsio.OpenUserFile/OpenUserDir/ReadUserFile: use them for any file another user controls (a transcript, anything under a HOME, a container's root, /tmp), or list it in openAccounts saying why its file is not one", key)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(openAccounts)) {
		if !found[key] {
			t.Errorf("openAccounts lists %q, which the code no longer holds: remove it", key)
		}
	}
	if len(found) == 0 {
		t.Fatal("no open found: the walk is broken")
	}
}

// fileOpens lists the open calls of one file as "path func pkg.Name",
// pkg being the import's last element.
func fileOpens(f *ast.File, rel string) []string {
	names := map[string]string{} // local name -> import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = p
	}
	var out []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		fname := fn.Name.Name
		if fn.Recv != nil && len(fn.Recv.List) > 0 {
			fname = recvName(fn.Recv.List[0].Type) + "." + fname
		}
		ast.Inspect(fn, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			p, ok := names[id.Name]
			if !ok || !slices.Contains(openCalls[p], sel.Sel.Name) {
				return true
			}
			out = append(out, rel+" "+fname+" "+p[strings.LastIndex(p, "/")+1:]+"."+sel.Sel.Name)
			return true
		})
	}
	return out
}

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}
