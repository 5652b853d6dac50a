//go:build linux

package procwalk

import (
	"encoding/binary"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		btime     int64
		cpus      int
		malformed bool
	}{
		{"two cpus", "cpu  7036 4924 5707 76333 125 0 63 830 0 0\ncpu0 3731 1946 3221 38098 77 0 24 408 0 0\n" +
			"cpu1 3305 2978 2486 38235 47 0 39 422 0 0\nintr 1 2 3\nctxt 99\nbtime 1795312712\nprocesses 20270\n", 1795312712, 2, false},
		{"no cpuN lines counts one", "cpu  1 2 3\nbtime 5\n", 5, 1, false},
		{"btime last, no newline", "cpu0 1\ncpu1 1\ncpu2 1\nbtime 1700000000", 1700000000, 3, false},
		{"cpufreq-like names are not cpus", "cpux 1\ncpu 1\nbtime 1\n", 1, 1, false},
		{"no btime", "cpu0 1 2 3\n", 0, 0, true},
		{"bad btime", "btime soon\n", 0, 0, true},
		{"empty btime", "btime \n", 0, 0, true},
		{"empty", "", 0, 0, true},
	}
	for _, tt := range tests {
		btime, cpus, err := parseProcStat([]byte(tt.in))
		if tt.malformed {
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("%s: parseProcStat = %d, %d, %v; want ErrMalformed", tt.name, btime, cpus, err)
			}
			continue
		}
		if err != nil || btime != tt.btime || cpus != tt.cpus {
			t.Errorf("%s: parseProcStat = %d, %d, %v; want %d, %d", tt.name, btime, cpus, err, tt.btime, tt.cpus)
		}
	}
}

func TestParseMemTotal(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
	}{
		{"MemTotal:       24682416 kB\nMemFree:        19479844 kB\n", 24682416 << 10},
		{"MemFree: 1 kB\nMemTotal: 2 kB", 2 << 10},
		{"MemFree: 1 kB\n", 0},
		{"MemTotal: lots kB\n", 0},
		{"MemTotal: 20000000000000000 kB\n", 0}, // bytes overflow: garbage
		{"MemTotal: 18014398509481983 kB\n", 1<<64 - 1024},
		{"", 0},
	}
	for _, tt := range tests {
		if got := parseMemTotal([]byte(tt.in)); got != tt.want {
			t.Errorf("parseMemTotal(%q) = %d; want %d", tt.in, got, tt.want)
		}
	}
}

// auxv builds a native-endian 64-bit auxiliary vector from tag, value pairs.
func auxv(pairs ...uint64) []byte {
	b := make([]byte, 0, 8*len(pairs))
	for _, v := range pairs {
		b = binary.NativeEndian.AppendUint64(b, v)
	}
	return b
}

func TestParseAuxvClockTicks(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want uint64
	}{
		{"100", auxv(33, 0x7ffd, 6, 4096, 17, 100, 3, 0x400040, 0, 0), 100},
		{"250, first", auxv(17, 250, 0, 0), 250},
		{"after AT_NULL is ignored", auxv(6, 4096, 0, 0, 17, 1000), 0},
		{"missing", auxv(6, 4096, 0, 0), 0},
		{"truncated pair", auxv(6, 4096, 17)[:20], 0},
		{"empty", nil, 0},
	}
	for _, tt := range tests {
		if got := ParseAuxvClockTicks(tt.in); got != tt.want {
			t.Errorf("%s: parseAuxvClockTicks = %d; want %d", tt.name, got, tt.want)
		}
	}
}

func TestParseHidePID(t *testing.T) {
	const others = "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n" +
		"23 27 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n" +
		"41 22 0:38 / /proc/sys/fs/binfmt_misc rw,relatime shared:30 - binfmt_misc binfmt_misc rw\n"
	tests := []struct {
		name, mountinfo, root, want string
	}{
		{"not hidden", others + "22 27 0:21 / /proc rw,relatime - proc proc rw\n", "/proc", ""},
		{"hidepid=2", others + "22 27 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:13 - proc proc rw,hidepid=2\n", "/proc", "2"},
		{"hidepid=invisible", "22 27 0:21 / /proc rw,relatime - proc proc rw,hidepid=invisible,subset=pid\n", "/proc", "invisible"},
		{"hidepid=noaccess with gid", "22 27 0:21 / /proc rw,relatime - proc proc rw,gid=27,hidepid=noaccess\n", "/proc", "noaccess"},
		{"hidepid=ptraceable", "22 27 0:21 / /proc rw - proc proc rw,hidepid=ptraceable\n", "/proc", "ptraceable"},
		{"hidepid=off", "22 27 0:21 / /proc rw,relatime - proc proc rw,hidepid=off\n", "/proc", ""},
		{"hidepid=0", "22 27 0:21 / /proc rw,relatime - proc proc rw,hidepid=0\n", "/proc", ""},
		{"only other mounts", others, "/proc", ""},
		{"empty", "", "/proc", ""},
		{"another root", "22 27 0:21 / /proc rw - proc proc rw,hidepid=2\n90 27 0:50 / /srv/proc rw - proc proc rw,hidepid=1\n", "/srv/proc", "1"},
		{"root with trailing slash", "22 27 0:21 / /proc rw - proc proc rw,hidepid=2\n", "/proc/", "2"},
		{"fixture root matches no mount", "22 27 0:21 / /proc rw - proc proc rw,hidepid=2\n", "testdata/proc", ""},
		// Many optional fields push the super options far right.
		{"many optional fields", "22 27 0:21 / /proc rw,relatime shared:13 master:4 propagate_from:2 unbindable - proc proc rw,hidepid=2\n", "/proc", "2"},
		// A later mount on the same point hides the earlier one.
		{"stacked: last wins", "22 27 0:21 / /proc rw - proc proc rw,hidepid=2\n95 22 0:60 / /proc rw - proc proc rw\n", "/proc", ""},
		{"stacked: last wins, hidden", "22 27 0:21 / /proc rw - proc proc rw\n95 22 0:60 / /proc rw - proc proc rw,hidepid=invisible\n", "/proc", "invisible"},
		// A tmpfs over /proc is not procfs: it has no hidepid.
		{"not a proc mount", "22 27 0:21 / /proc rw - tmpfs tmpfs rw,hidepid=2\n", "/proc", ""},
		{"escaped space in mount point", "90 27 0:50 / /my\\040proc rw - proc proc rw,hidepid=2\n", "/my proc", "2"},
		{"truncated line", "22 27 0:21 / /proc rw - proc\n", "/proc", ""},
		{"garbage", "\x00\x01 - - - -\n", "/proc", ""},
	}
	for _, tt := range tests {
		if got := parseHidePID([]byte(tt.mountinfo), tt.root); got != tt.want {
			t.Errorf("%s: parseHidePID(root %q) = %q; want %q", tt.name, tt.root, got, tt.want)
		}
	}
}

func TestHostFixture(t *testing.T) {
	fs, err := NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	got, err := fs.Host()
	if err != nil {
		t.Fatal(err)
	}
	want := Host{
		BootTime:      time.Unix(1700000000, 0),
		ClockTicks:    100,
		PageSizeBytes: uint64(os.Getpagesize()),
		MemTotalBytes: 16303428 << 10,
		NoSwapInUse:   false, // 1088 kB of swap used
		CPUs:          4,
		HidePID:       "", // the fixture root is no mount point of this host
	}
	if got != want {
		t.Errorf("Host() =\n %+v\nwant\n %+v", got, want)
	}
}

// writeFiles creates files (path -> contents) under a new temporary root.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for path, data := range files {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestHostVariants(t *testing.T) {
	const stat = "cpu  1 1 1\ncpu0 1 1 1\nbtime 1600000000\n"
	tests := []struct {
		name      string
		files     map[string]string
		mountinfo string // "ROOT" is replaced by the temporary root
		want      Host   // BootTime, CPUs and PageSizeBytes are the same for all
	}{
		{"auxv says 250 Hz", map[string]string{"self/auxv": string(auxv(6, 4096, 17, 250, 0, 0))}, "", Host{ClockTicks: 250}},
		{"no auxv, meminfo, mountinfo: defaults", nil, "", Host{ClockTicks: 100}},
		{"auxv without AT_CLKTCK falls back", map[string]string{"self/auxv": string(auxv(6, 4096, 0, 0))}, "", Host{ClockTicks: 100}},
		{"meminfo", map[string]string{"meminfo": "MemTotal: 1000 kB\n"}, "", Host{ClockTicks: 100, MemTotalBytes: 1000 << 10}},
		{"hidepid on this root", nil, "22 27 0:21 / ROOT rw,relatime - proc proc rw,hidepid=invisible\n", Host{ClockTicks: 100, HidePID: "invisible"}},
		{"hidepid on another root", nil, "22 27 0:21 / /proc rw,relatime - proc proc rw,hidepid=2\n", Host{ClockTicks: 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"stat": stat}
			maps.Copy(files, tt.files)
			root := writeFiles(t, files)
			if tt.mountinfo != "" {
				if err := os.MkdirAll(filepath.Join(root, "self"), 0o755); err != nil {
					t.Fatal(err)
				}
				mi := strings.ReplaceAll(tt.mountinfo, "ROOT", root)
				if err := os.WriteFile(filepath.Join(root, "self", "mountinfo"), []byte(mi), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fs, err := NewFS(root)
			if err != nil {
				t.Fatal(err)
			}
			got, err := fs.Host()
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.BootTime, want.CPUs, want.PageSizeBytes = time.Unix(1600000000, 0), 1, uint64(os.Getpagesize())
			if got != want {
				t.Errorf("Host() =\n %+v\nwant\n %+v", got, want)
			}
		})
	}
}

func TestHostBadStat(t *testing.T) {
	fs, err := NewFS(writeFiles(t, map[string]string{"stat": "cpu0 1\n"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Host(); !errors.Is(err, ErrMalformed) {
		t.Errorf("Host() on a stat without btime: %v; want ErrMalformed", err)
	}
}
