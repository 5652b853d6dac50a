//go:build linux

package procwalk

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
)

func TestParseNoSwapInUse(t *testing.T) {
	tests := []struct {
		name, meminfo string
		want          bool
	}{
		{"no swap", "MemTotal: 1000 kB\nSwapTotal:       0 kB\nSwapFree:        0 kB\n", true},
		{"swap, none used", "SwapTotal: 2097148 kB\nSwapFree: 2097148 kB\n", true},
		{"swap used", "SwapTotal: 2097148 kB\nSwapFree: 2096060 kB\n", false},
		{"no SwapFree line", "SwapTotal: 0 kB\n", false},
		{"no swap lines", "MemTotal: 1000 kB\n", false},
		{"garbage", "SwapTotal: lots kB\nSwapFree: 0 kB\n", false},
	}
	for _, tt := range tests {
		if got := parseNoSwapInUse([]byte(tt.meminfo)); got != tt.want {
			t.Errorf("%s: parseNoSwapInUse = %v; want %v", tt.name, got, tt.want)
		}
	}
}

// swapRoot is a /proc of one process (pid 100) whose status says VmSwap
// 64 kB, and meminfo as given.
func swapRoot(t *testing.T, meminfo string) string {
	return writeFiles(t, map[string]string{
		"stat":       "cpu0 1\nbtime 1600000000\n",
		"meminfo":    meminfo,
		"100/stat":   "100 (worker) S 1 100 100 0 -1 4194560 0 0 0 0 1 1 0 0 20 0 1 0 500 1000 10 0 0 0",
		"100/statm":  "250 10 5 1 0 3 0\n",
		"100/status": "Name:\tworker\nUid:\t1000\t1001\t1001\t1001\nVmSwap:\t      64 kB\n",
	})
}

const (
	meminfoNoSwapUsed = "MemTotal: 1000 kB\nSwapTotal: 1024 kB\nSwapFree: 1024 kB\n"
	meminfoSwapUsed   = "MemTotal: 1000 kB\nSwapTotal: 1024 kB\nSwapFree: 960 kB\n"
)

// scanRecording scans root for fields, returning the snapshot and the
// files read, in order.
func scanRecording(t *testing.T, root string, fields Fields, during func(file string)) (*Snapshot, []string) {
	t.Helper()
	fs, err := NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	sc := NewScanner(fs)
	var files []string
	sc.beforeRead = func(_ int, file string) {
		files = append(files, file)
		if during != nil {
			during(file)
		}
	}
	s, err := sc.Snapshot(fields)
	if err != nil {
		t.Fatal(err)
	}
	return s, files
}

func TestFieldSwapWithoutSwapInUseReadsNothing(t *testing.T) {
	s, files := scanRecording(t, swapRoot(t, meminfoNoSwapUsed), FieldSwap, nil)
	p := s.Process(100)
	if p == nil {
		t.Fatal("pid 100 missing")
	}
	if slices.Contains(files, "status") {
		t.Errorf("read %v: status read though no swap is in use", files)
	}
	if p.Read != FieldSwap || p.SwapBytes != 0 {
		t.Errorf("Read %v, SwapBytes %d; want swap, 0", p.Read, p.SwapBytes)
	}
}

func TestFieldSwapWithSwapInUseReadsStatus(t *testing.T) {
	s, files := scanRecording(t, swapRoot(t, meminfoSwapUsed), FieldSwap, nil)
	p := s.Process(100)
	if !slices.Contains(files, "status") {
		t.Errorf("read %v: status not read though swap is in use", files)
	}
	if p.Read != FieldStatus|FieldOwner|FieldSwap || p.SwapBytes != 64<<10 || p.EffectiveUID != 1001 {
		t.Errorf("Read %v, SwapBytes %d, euid %d; want status,owner,swap, 65536, 1001", p.Read, p.SwapBytes, p.EffectiveUID)
	}
}

// TestFieldSwapSwapCameIntoUse: swap used between the check before the
// scan and the one after leaves the values unknown, never 0.
func TestFieldSwapSwapCameIntoUse(t *testing.T) {
	root := swapRoot(t, meminfoNoSwapUsed)
	s, _ := scanRecording(t, root, FieldSwap, func(file string) {
		if file == "statm" {
			if err := os.WriteFile(root+"/meminfo", []byte(meminfoSwapUsed), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})
	if p := s.Process(100); p.Read&FieldSwap != 0 {
		t.Errorf("Read %v: swap marked read though swap came into use during the scan", p.Read)
	}
}

func TestReadMoreFieldSwap(t *testing.T) {
	for _, tt := range []struct {
		meminfo    string
		wantStatus bool
	}{{meminfoNoSwapUsed, false}, {meminfoSwapUsed, true}} {
		root := swapRoot(t, tt.meminfo)
		fs, err := NewFS(root)
		if err != nil {
			t.Fatal(err)
		}
		sc := NewScanner(fs)
		s, err := sc.Snapshot(0)
		if err != nil {
			t.Fatal(err)
		}
		var files []string
		sc.beforeRead = func(_ int, file string) { files = append(files, file) }
		p := s.Process(100)
		if err := sc.ReadMore([]*Process{p}, FieldSwap); err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(files, "status"); got != tt.wantStatus || p.Read&FieldSwap == 0 {
			t.Errorf("meminfo %q: status read %v (want %v), Read %v", tt.meminfo, got, tt.wantStatus, p.Read)
		}
	}
}

// TestFieldOwnerOfFixtureReadsStatus: a fixture tree's directories are
// owned by whoever wrote them, so status serves FieldOwner there.
func TestFieldOwnerOfFixtureReadsStatus(t *testing.T) {
	s, files := scanRecording(t, swapRoot(t, meminfoNoSwapUsed), FieldOwner, nil)
	p := s.Process(100)
	if !slices.Contains(files, "status") || p.EffectiveUID != 1001 || p.Read&FieldOwner == 0 {
		t.Errorf("read %v, euid %d, Read %v; want status read, 1001, owner", files, p.EffectiveUID, p.Read)
	}
}

// TestLiveFieldOwner compares the owner of every /proc/<pid> with the
// effective uid status gives, on this host: the kernel makes a process's
// euid the owner of its directory (not of its files, which a non-dumpable
// process gives to root).
func TestLiveFieldOwner(t *testing.T) {
	fs := liveFS(t)
	sc := NewScanner(fs)
	if !sc.procfs {
		t.Skipf("%s is no procfs", DefaultRoot)
	}
	var files []string
	sc.beforeRead = func(_ int, file string) { files = append(files, file) }
	owners, err := sc.Snapshot(FieldOwner)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(files, "status") {
		t.Errorf("FieldOwner read status on a live procfs")
	}
	statuses, err := fs.Snapshot(FieldStatus)
	if err != nil {
		t.Fatal(err)
	}
	again, err := NewScanner(fs).Snapshot(FieldOwner)
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for i := range owners.Procs {
		p := &owners.Procs[i]
		st, later := statuses.Lookup(p.ID), again.Lookup(p.ID)
		if p.Read&FieldOwner == 0 || st == nil || later == nil || st.Read&FieldStatus == 0 ||
			later.Read&FieldOwner == 0 || later.EffectiveUID != p.EffectiveUID {
			continue // gone, or its euid changed between the scans
		}
		compared++
		if st.EffectiveUID != p.EffectiveUID {
			t.Errorf("pid %d (%s): owner %d, status euid %d", p.ID.PID, p.Comm, p.EffectiveUID, st.EffectiveUID)
		}
	}
	if compared == 0 {
		t.Error("no process compared")
	}
}

// TestIntegrationFieldOwnerNonDumpable starts a process as uid 65534 that
// makes itself non-dumpable: its files then belong to root, its
// directory still to 65534, which FieldOwner reports (as ps's USER).
func TestIntegrationFieldOwnerNonDumpable(t *testing.T) {
	if os.Getenv("PROCWALK_INTEGRATION") == "" {
		t.Skip("set PROCWALK_INTEGRATION=1")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to start a process as another user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv (util-linux)")
	}
	// The system's python: an interpreter under root's home (pyenv) is
	// not for uid 65534 to run.
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	// prctl(PR_SET_DUMPABLE, 0), then say so and wait for stdin to close.
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", python, "-c",
		"import ctypes, sys\nctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\nprint(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0), flush=True)\nsys.stdin.read()")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start %s: %v", setpriv, err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait() // our own child: it ends when its stdin closes
	}()
	line := make([]byte, 2)
	if _, err := out.Read(line); err != nil || line[0] != '0' {
		t.Fatalf("the child did not become non-dumpable: %q, %v", line, err)
	}
	fs := liveFS(t)
	pid := cmd.Process.Pid
	var st os.FileInfo
	if st, err = os.Stat(fs.PIDPath(pid, "stat")); err != nil {
		t.Fatal(err)
	}
	if uid := fileUID(st); uid != 0 {
		t.Fatalf("a non-dumpable process's stat is owned by %d, not root: is this the kernel FieldOwner assumes?", uid)
	}
	s, err := NewScanner(fs).Snapshot(FieldOwner)
	if err != nil {
		t.Fatal(err)
	}
	p := s.Process(pid)
	if p == nil || p.Read&FieldOwner == 0 || p.EffectiveUID != 65534 {
		t.Fatalf("pid %d: %+v; want FieldOwner 65534", pid, p)
	}
	t.Logf("pid %d: non-dumpable, stat owned by root, FieldOwner %s", pid, strconv.Itoa(p.EffectiveUID))
}

// fileUID is the owner of a file os.Stat described.
func fileUID(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}
