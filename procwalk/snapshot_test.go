//go:build linux

package procwalk

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The fixture at testdata/proc describes a 4-CPU host booted at unix time
// 1700000000 with USER_HZ 100 (self/auxv). Its processes:
//
//	1 systemd
//	├─ 100 tmux: server
//	│  ├─ 101 bash (pts/0, own session) ─ 110 make ─ 111 cc1
//	│  └─ 102 bash (pts/1, own session) ─ 120 python3 ─ 121 zombie
//	├─ 200..205 adversarial comms
//	└─ 303 badfiles (malformed status, io and oom_score)
//	2 kthreadd ─ 3 kworker (kernel threads)
//	400 orphan: its parent 300 vanished
//
// 300 is listed but has no stat (gone), 301 has a truncated stat and 302 a
// garbage statm (both malformed, dropped); 4194305 is above PID_MAX_LIMIT.
const fixtureRoot = "testdata/proc"

// fixtureBoot is the fixture's btime.
var fixtureBoot = time.Unix(1700000000, 0)

func fixtureSnapshot(t testing.TB, fields Fields) *Snapshot {
	t.Helper()
	fs, err := NewFS(fixtureRoot)
	if err != nil {
		t.Fatal(err)
	}
	s, err := fs.Snapshot(fields)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func pids(procs []*Process) []int {
	out := []int{}
	for _, p := range procs {
		out = append(out, p.ID.PID)
	}
	return out
}

func TestSnapshotFixtureVisibility(t *testing.T) {
	wantPIDs := []int{1, 2, 3, 100, 101, 102, 110, 111, 120, 121, 200, 201, 202, 203, 204, 205, 303, 400}
	tests := []struct {
		fields Fields
		want   Visibility
	}{
		// 300 gone; 301 (stat) and 302 (statm) malformed and dropped.
		{0, Visibility{Listed: 21, Gone: 1, Malformed: 2}},
		// 303 is kept but its status, io and oom_score are malformed.
		{AllFields | FieldSmaps, Visibility{Listed: 21, Gone: 1, Malformed: 3}},
		{FieldCmdline, Visibility{Listed: 21, Gone: 1, Malformed: 2}},
		{FieldIO, Visibility{Listed: 21, Gone: 1, Malformed: 3}},
	}
	for _, tt := range tests {
		s := fixtureSnapshot(t, tt.fields)
		if !reflect.DeepEqual(s.Visibility, tt.want) {
			t.Errorf("fields %q: Visibility = %+v; want %+v", tt.fields, s.Visibility, tt.want)
		}
		if !s.Visibility.Partial() {
			t.Errorf("fields %q: Partial() = false with gone and malformed processes", tt.fields)
		}
		var got []int
		for i := range s.Procs {
			got = append(got, s.Procs[i].ID.PID)
		}
		if !slices.Equal(got, wantPIDs) {
			t.Errorf("fields %q: pids %v; want %v", tt.fields, got, wantPIDs)
		}
		if s.Fields != tt.fields {
			t.Errorf("Fields = %v; want %v", s.Fields, tt.fields)
		}
	}
}

func TestVisibilityPartial(t *testing.T) {
	tests := []struct {
		v    Visibility
		want bool
	}{
		{Visibility{Listed: 10}, false},
		{Visibility{Listed: 10, Gone: 1}, true},
		{Visibility{Listed: 10, Malformed: 1}, true},
		{Visibility{Listed: 10, Denied: map[string]int{"io": 3}}, true},
		{Visibility{Listed: 10, HidePID: "invisible", OthersHidden: true}, true},
		{Visibility{Listed: 10, HidePID: "invisible"}, false}, // root sees everything
	}
	for _, tt := range tests {
		if got := tt.v.Partial(); got != tt.want {
			t.Errorf("%+v.Partial() = %v; want %v", tt.v, got, tt.want)
		}
	}
}

// at is the fixture's boot time plus ticks at 100 Hz.
func at(ticks int64) time.Time {
	return fixtureBoot.Add(time.Duration(ticks) * 10 * time.Millisecond)
}

func cgroupLines(path string) []CgroupLine {
	return []CgroupLine{{9, "name=systemd", path}, {8, "pids", path}, {4, "memory", path}, {1, "cpu,cpuacct", path}, {0, "", path}}
}

func TestSnapshotFixtureProcesses(t *testing.T) {
	page := uint64(os.Getpagesize())
	const tmuxScope = "/user.slice/user-1000.slice/session-2.scope"
	const kB = 1024
	all := AllFields | FieldSmaps
	want := []Process{
		{
			ID: ProcID{1, 5}, PPID: 0, PGRP: 1, SID: 1, Comm: "systemd", State: 'S', Threads: 1, Start: at(5),
			UserCPUSeconds: 15, SystemCPUSeconds: 8, ChildrenUserCPUSeconds: 300, ChildrenSystemCPUSeconds: 120,
			VSizeBytes: 171000000, RSSBytes: 3000 * page, SharedBytes: 2100 * page, TextBytes: 250 * page, DataBytes: 5000 * page,
			VoluntaryCtxSwitches: 9000, InvoluntaryCtxSwitches: 700,
			Cmdline: []string{"/sbin/init", "splash"}, Exe: "/usr/lib/systemd/systemd", Cwd: "/",
			IO:    IO{RChar: 9000000, WChar: 4000000, SyscR: 30000, SyscW: 20000, ReadBytes: 700000000, WriteBytes: 300000000, CancelledWriteBytes: 1000},
			Smaps: SmapsRollup{RSSBytes: 12000 * kB, PSSBytes: 7000 * kB, USSBytes: (2000 + 3900) * kB},
			FDs:   3, Cgroups: cgroupLines("/init.scope"), OOMScore: 0,
			Read: all,
		},
		{
			// A kernel thread: no memory, no cmdline, no exe; smaps does not apply.
			ID: ProcID{2, 10}, Comm: "kthreadd", State: 'S', Kernel: true, Threads: 1, Start: at(10),
			VoluntaryCtxSwitches: 500, InvoluntaryCtxSwitches: 3, Cwd: "/", Cgroups: cgroupLines("/"),
			Read: all &^ (FieldExe | FieldSmaps),
		},
		{
			ID: ProcID{3, 12}, PPID: 2, Comm: "kworker/0:0H-events_highpri", State: 'I', Kernel: true, Threads: 1, Start: at(12),
			UserCPUSeconds: 0.07, SystemCPUSeconds: 0.42,
			VoluntaryCtxSwitches: 10, InvoluntaryCtxSwitches: 2, Cwd: "/", Cgroups: cgroupLines("/"),
			Read: all &^ (FieldExe | FieldSmaps),
		},
		{
			ID: ProcID{111, 160100}, PPID: 110, PGRP: 110, SID: 101, TTY: 136 << 8, Comm: "cc1", State: 'R', Threads: 1, Start: at(160100),
			UserCPUSeconds: 987.65, SystemCPUSeconds: 43.21,
			VSizeBytes: 400000000, RSSBytes: 30000 * page, SharedBytes: 1500 * page, TextBytes: 6000 * page, DataBytes: 27000 * page,
			RealUID: 1000, EffectiveUID: 1000, SwapBytes: 1024 * kB, VoluntaryCtxSwitches: 10, InvoluntaryCtxSwitches: 2,
			Cmdline: []string{"/usr/lib/gcc/x86_64-linux-gnu/12/cc1", "-quiet", "main.c"},
			Exe:     "/usr/lib/gcc/x86_64-linux-gnu/12/cc1", Cwd: "/home/dev/src",
			IO: IO{RChar: 80000000, WChar: 6000000, SyscR: 20000, SyscW: 3000, ReadBytes: 52428800, WriteBytes: 6291456},
			// USS = Private_Clean 1000 + Private_Dirty 90000 kB.
			Smaps: SmapsRollup{RSSBytes: 120000 * kB, PSSBytes: 100000 * kB, USSBytes: 91000 * kB, SwapBytes: 1024 * kB, SwapPSSBytes: 1024 * kB},
			FDs:   6, Cgroups: cgroupLines(tmuxScope), OOMScore: 120,
			Read: all,
		},
		{
			// A zombie: statm zeros, empty cmdline, no exe, cwd or smaps, fds not
			// counted. None of that is denied or malformed: it does not apply.
			ID: ProcID{121, 170500}, PPID: 120, PGRP: 120, SID: 102, TTY: 136<<8 | 1, Comm: "defunct", State: 'Z', Threads: 1, Start: at(170500),
			UserCPUSeconds: 0.12, SystemCPUSeconds: 0.03,
			RealUID: 1000, EffectiveUID: 1000, VoluntaryCtxSwitches: 10, InvoluntaryCtxSwitches: 2,
			IO:      IO{RChar: 6976, SyscR: 10},
			Cgroups: cgroupLines(tmuxScope),
			Read:    FieldStatus | FieldCmdline | FieldIO | FieldCgroup | FieldOOMScore | FieldOwner | FieldSwap,
		},
		{
			// Broken status, io and oom_score: the process is kept, those
			// fields are marked Malformed and left zero.
			ID: ProcID{303, 300003}, PPID: 1, PGRP: 303, SID: 303, Comm: "badfiles", State: 'S', Threads: 1, Start: at(300003),
			RSSBytes: 16 * page, SharedBytes: 5 * page, TextBytes: 1 * page, DataBytes: 4 * page,
			Cmdline: []string{"badfiles"}, Cwd: "/", FDs: 3, Cgroups: cgroupLines("/"),
			Read:      FieldCmdline | FieldCwd | FieldFDs | FieldCgroup,
			Malformed: FieldStatus | FieldIO | FieldOOMScore,
		},
	}
	s := fixtureSnapshot(t, all)
	for _, w := range want {
		got := s.Process(w.ID.PID)
		if got == nil {
			t.Errorf("pid %d missing", w.ID.PID)
			continue
		}
		if !got.Start.Equal(w.Start) {
			t.Errorf("pid %d: Start = %v; want %v", w.ID.PID, got.Start, w.Start)
		}
		g := *got
		g.Start, w.Start = time.Time{}, time.Time{}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("pid %d:\n got %+v\nwant %+v", w.ID.PID, g, w)
		}
	}
}

func TestSnapshotAdversarialComms(t *testing.T) {
	s := fixtureSnapshot(t, FieldCmdline)
	tests := []struct {
		pid   int
		comm  string
		name  string // Name(): argv[0]'s base, else comm
		state byte
	}{
		{200, "my prog", "my prog", 'S'},
		{201, "(sd-pam)", "(sd-pam)", 'S'},
		{202, ") (", ") (", 'S'},
		{203, "evil\nname", "evil\nname", 'S'},
		{204, "", "", 'S'},
		// A parser splitting on the first ')' would read state Z and ppid 9.
		{205, "x) Z 9 9 9 (y", "x) Z 9 9 9 (y", 'S'},
		{100, "tmux: server", "tmux", 'S'},
		{111, "cc1", "cc1", 'R'},
	}
	for _, tt := range tests {
		p := s.Process(tt.pid)
		if p == nil {
			t.Errorf("pid %d missing", tt.pid)
			continue
		}
		if p.Comm != tt.comm || p.Name() != tt.name || p.State != tt.state || p.PPID == 9 {
			t.Errorf("pid %d: comm %q name %q state %c ppid %d; want comm %q name %q state %c",
				tt.pid, p.Comm, p.Name(), p.State, p.PPID, tt.comm, tt.name, tt.state)
		}
	}
}

func TestSnapshotFieldSelection(t *testing.T) {
	// Without optional fields only stat and statm are read.
	s := fixtureSnapshot(t, 0)
	for i := range s.Procs {
		p := &s.Procs[i]
		if p.Read != 0 || p.Denied != 0 || p.Malformed != 0 || p.Cmdline != nil || p.Exe != "" || p.Cwd != "" ||
			p.IO != (IO{}) || p.Smaps != (SmapsRollup{}) || p.FDs != 0 || p.Cgroups != nil || p.RealUID != 0 {
			t.Errorf("pid %d read optional fields without asking: %+v", p.ID.PID, *p)
		}
	}
	if p := s.Process(111); p.RSSBytes != 30000*uint64(os.Getpagesize()) || p.UserCPUSeconds != 987.65 {
		t.Errorf("cc1 without optional fields: RSS %d, user CPU %v", p.RSSBytes, p.UserCPUSeconds)
	}
	// One field reads only that field.
	s = fixtureSnapshot(t, FieldIO)
	p := s.Process(111)
	if p.Read != FieldIO || p.IO.ReadBytes != 52428800 || p.Cmdline != nil || p.Smaps != (SmapsRollup{}) {
		t.Errorf("FieldIO only: Read %v, IO %+v, Cmdline %q, Smaps %+v", p.Read, p.IO, p.Cmdline, p.Smaps)
	}
	// Without smaps, swap comes from status's VmSwap.
	s = fixtureSnapshot(t, FieldStatus)
	if p := s.Process(101); p.SwapBytes != 64<<10 || p.Read != FieldStatus|FieldOwner|FieldSwap {
		t.Errorf("bash status only: SwapBytes %d, Read %v; want 65536, status,owner,swap", p.SwapBytes, p.Read)
	}
}

func TestSnapshotScannerReuse(t *testing.T) {
	// A Scanner reuses its buffers and interns comms: a second scan must
	// give exactly the first one's processes.
	fs, err := NewFS(fixtureRoot)
	if err != nil {
		t.Fatal(err)
	}
	sc := NewScanner(fs)
	first, err := sc.Snapshot(AllFields | FieldSmaps)
	if err != nil {
		t.Fatal(err)
	}
	second, err := sc.Snapshot(AllFields | FieldSmaps)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first.Procs, second.Procs) || !reflect.DeepEqual(first.Visibility, second.Visibility) {
		t.Error("second scan with the same Scanner differs from the first")
	}
	if len(first.Procs) != 18 {
		t.Errorf("%d processes; want 18", len(first.Procs))
	}
}

func TestScannerAlive(t *testing.T) {
	fs, err := NewFS(fixtureRoot)
	if err != nil {
		t.Fatal(err)
	}
	sc := NewScanner(fs)
	root, err := syscall.Open(fixtureRoot, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(root)
	tests := []struct {
		id   ProcID
		want bool
	}{
		{ProcID{100, 150000}, true},
		{ProcID{121, 170500}, true},  // a zombie is still there
		{ProcID{100, 149999}, false}, // pid reused by another process
		{ProcID{300, 0}, false},      // vanished
		{ProcID{301, 0}, false},      // unreadable stat
		{ProcID{99999, 1}, false},    // never existed
		{ProcID{205, 200005}, true},  // comm with fake fields
		{ProcID{203, 200003}, true},  // comm with a newline
		{ProcID{2, 10}, true},        // kernel thread
		{ProcID{400, 400000}, true},  // orphan
		{ProcID{302, 300002}, true},  // statm is broken, stat is fine
		{ProcID{111, 160100}, true},  // cc1
		{ProcID{111, 160100 + 1}, false},
	}
	for _, tt := range tests {
		if got := sc.alive(root, tt.id); got != tt.want {
			t.Errorf("alive(%v) = %v; want %v", tt.id, got, tt.want)
		}
	}
}

func TestSnapshotRootErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "proc")
	_, err := FS{root: missing}.Snapshot(0)
	if !errors.Is(err, ErrNoProc) || !strings.Contains(err.Error(), missing) || errors.Is(err, ErrGone) {
		t.Errorf("Snapshot of a missing root: %v; want ErrNoProc naming %s, not 'gone'", err, missing)
	}
	// A root with a stat file but no pids is an empty, complete snapshot.
	root := writeFiles(t, map[string]string{"stat": "cpu0 1\nbtime 1\n", "self/mountinfo": ""})
	s, err := FS{root: root}.Snapshot(AllFields)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Procs) != 0 || s.Visibility.Listed != 0 || s.Visibility.Partial() || len(s.Roots()) != 0 {
		t.Errorf("empty root: %d procs, %+v", len(s.Procs), s.Visibility)
	}
}

// procFiles is a minimal valid pid directory for hand-made fixtures.
func procFiles(pid, ppid string) map[string]string {
	return map[string]string{
		pid + "/stat":  pid + " (p" + pid + ") S " + ppid + " " + pid + " " + pid + " 0 -1 4194560 0 0 0 0 10 20 0 0 20 0 1 0 500 1000 2\n",
		pid + "/statm": "10 2 1 1 0 3 0\n",
		pid + "/io":    "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 5\nwrite_bytes: 6\ncancelled_write_bytes: 0\n",
	}
}

// TestSnapshotDenied checks that refused files are counted as denied, not
// malformed or gone. Fixture files cannot be made unreadable for root, so
// the fixture links them to /proc/sys/vm/drop_caches, which the kernel
// makes write-only even for root: reading it fails with a real EACCES.
func TestSnapshotDenied(t *testing.T) {
	const writeOnly = "/proc/sys/vm/drop_caches"
	if _, err := readFile(writeOnly); !errors.Is(err, syscall.EACCES) {
		t.Skipf("reading %s gave %v, not EACCES: cannot fake a denied file here", writeOnly, err)
	}
	files := map[string]string{"stat": "cpu0 1\nbtime 1000\n"}
	for _, pid := range []string{"10", "11", "12"} {
		maps.Copy(files, procFiles(pid, "1"))
	}
	root := writeFiles(t, files)
	for _, link := range []string{"11/io", "12/stat"} {
		p := filepath.Join(root, link)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(writeOnly, p); err != nil {
			t.Fatal(err)
		}
	}
	s, err := FS{root: root}.Snapshot(FieldIO)
	if err != nil {
		t.Fatal(err)
	}
	// 12's stat is refused (as under hidepid=noaccess): dropped, counted as denied.
	want := Visibility{Listed: 3, Denied: map[string]int{"io": 1, "stat": 1}}
	if !reflect.DeepEqual(s.Visibility, want) {
		t.Errorf("Visibility = %+v; want %+v", s.Visibility, want)
	}
	if !s.Visibility.Partial() {
		t.Error("Partial() = false with denied files")
	}
	if got := pids(s.Roots()); !slices.Equal(got, []int{10, 11}) {
		t.Errorf("processes %v; want [10 11]", got)
	}
	if p := s.Process(10); p.Read != FieldIO || p.Denied != 0 || p.IO.WriteBytes != 6 {
		t.Errorf("pid 10: Read %v Denied %v IO %+v", p.Read, p.Denied, p.IO)
	}
	if p := s.Process(11); p.Read != 0 || p.Denied != FieldIO || p.Malformed != 0 || p.IO != (IO{}) {
		t.Errorf("pid 11: Read %v Denied %v Malformed %v IO %+v; want io denied", p.Read, p.Denied, p.Malformed, p.IO)
	}
}

func TestSnapshotHidePIDAndGoneStatm(t *testing.T) {
	files := map[string]string{"stat": "cpu0 1\nbtime 1000\n"}
	maps.Copy(files, procFiles("10", "1"))
	maps.Copy(files, procFiles("11", "10"))
	delete(files, "11/statm") // exited between its stat and statm
	root := writeFiles(t, files)
	mountinfo := "22 27 0:21 / " + root + " rw,nosuid - proc proc rw,hidepid=invisible\n"
	if err := os.MkdirAll(filepath.Join(root, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "self", "mountinfo"), []byte(mountinfo), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := FS{root: root}.Snapshot(0)
	if err != nil {
		t.Fatal(err)
	}
	// Root sees every process whatever hidepid says; anyone else may not.
	want := Visibility{Listed: 2, Gone: 1, HidePID: "invisible", OthersHidden: os.Geteuid() != 0}
	if !reflect.DeepEqual(s.Visibility, want) {
		t.Errorf("Visibility = %+v; want %+v", s.Visibility, want)
	}
	if got := pids(s.Roots()); !slices.Equal(got, []int{10}) {
		t.Errorf("processes %v; want [10]", got)
	}
}

// TestSnapshotLongLinks checks that exe and cwd targets longer than the
// Scanner's buffer come back whole: readlink(2) cuts them silently.
func TestSnapshotLongLinks(t *testing.T) {
	files := map[string]string{"stat": "cpu0 1\nbtime 1000\n"}
	maps.Copy(files, procFiles("10", "1"))
	root := writeFiles(t, files)
	// Targets of 4095 bytes (PATH_MAX less its NUL, the longest a link can
	// hold) and of exactly 512 bytes, a size the buffer passes through.
	exe := strings.Repeat("/"+strings.Repeat("e", 62), 64) + "/" + strings.Repeat("x", 62)
	cwd := strings.Repeat("/"+strings.Repeat("c", 63), 8)
	if len(exe) != 4095 || len(cwd) != 512 {
		t.Fatalf("test targets are %d and %d bytes", len(exe), len(cwd))
	}
	for name, target := range map[string]string{"exe": exe, "cwd": cwd} {
		if err := os.Symlink(target, filepath.Join(root, "10", name)); err != nil {
			t.Fatal(err)
		}
	}
	sc := NewScanner(FS{root: root})
	sc.buf = make([]byte, 0, 16) // far smaller than either target
	s, err := sc.Snapshot(FieldExe | FieldCwd)
	if err != nil {
		t.Fatal(err)
	}
	p := s.Process(10)
	if p == nil || p.Read != FieldExe|FieldCwd {
		t.Fatalf("pid 10: %+v", p)
	}
	if p.Exe != exe || p.Cwd != cwd {
		t.Errorf("exe %d bytes, cwd %d bytes; want %d and %d, whole", len(p.Exe), len(p.Cwd), len(exe), len(cwd))
	}
}

// A kernel thread or a zombie has no memory of its own: its statm (zeros)
// is not read. The fixture's 2 and 3 are kernel threads, 121 a zombie.
func TestSnapshotSkipsStatmWithoutMemory(t *testing.T) {
	fs, err := NewFS(fixtureRoot)
	if err != nil {
		t.Fatal(err)
	}
	sc := NewScanner(fs)
	statm := map[int]bool{}
	sc.beforeRead = func(pid int, file string) {
		if file == "statm" {
			statm[pid] = true
		}
	}
	s, err := sc.Snapshot(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{2, 3, 121} {
		p := s.Process(pid)
		if p == nil || statm[pid] || p.RSSBytes != 0 {
			t.Errorf("pid %d: statm read %v, %+v", pid, statm[pid], p)
		}
	}
	if !statm[1] || !statm[111] || s.Process(111).RSSBytes == 0 {
		t.Errorf("statm of processes with memory not read: %v", statm)
	}
}

// TestSetPath: the pid's digits are kept from one file of a process to the
// next, and made again for another pid, shorter or longer.
func TestSetPath(t *testing.T) {
	fs, err := NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	sc := NewScanner(fs)
	for _, c := range []struct {
		pid  int
		file string
		want string
	}{
		{12345, "stat", "12345/stat\x00"},
		{12345, "statm", "12345/statm\x00"},
		{12345, "", "12345/\x00"},
		{7, "stat", "7/stat\x00"},
		{4194304, "cmdline", "4194304/cmdline\x00"},
		{12346, "io", "12346/io\x00"},
		{12345, "stat", "12345/stat\x00"},
	} {
		if got := string(sc.setPath(c.pid, c.file)); got != c.want {
			t.Errorf("setPath(%d, %q) = %q, want %q", c.pid, c.file, got, c.want)
		}
	}
}
