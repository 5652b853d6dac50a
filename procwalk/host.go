package procwalk

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// host.go reads host-wide facts: /proc/stat (btime, CPUs), /proc/meminfo
// (MemTotal, kB), /proc/self/auxv (AT_CLKTCK) and /proc/self/mountinfo
// (hidepid).

// Host holds the facts needed to turn /proc numbers into absolute units.
type Host struct {
	BootTime      time.Time // btime from /proc/stat, whole seconds
	ClockTicks    uint64    // USER_HZ: clock ticks per second of utime, stime, starttime
	PageSizeBytes uint64
	MemTotalBytes uint64
	CPUs          int // "cpuN" lines in /proc/stat: CPUs online
	// HidePID is the hidepid= option of the proc mount ("" when off or
	// unknown): other users' processes may be invisible or opaque.
	HidePID string
}

// defaultClockTicks is USER_HZ on every Linux architecture we target; used
// only when /proc/self/auxv cannot be read (a fixture without it).
const defaultClockTicks = 100

// atClkTck is the auxv tag of the clock tick rate (include/uapi/linux/auxvec.h).
const atClkTck = 17

// Host reads the host facts.
func (fs FS) Host() (Host, error) {
	h := Host{ClockTicks: defaultClockTicks, PageSizeBytes: uint64(os.Getpagesize())}
	b, err := readFile(fs.Path("stat"))
	if err != nil {
		// Not a process going away: the root itself is wrong or unreadable.
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe
		}
		return h, fmt.Errorf("%w: %w; is procfs mounted at %s? (mount -t proc proc %s, or pass --proc with the right root)", ErrNoProc, err, fs.root, fs.root)
	}
	btime, cpus, err := parseProcStat(b)
	if err != nil {
		return h, err
	}
	h.BootTime, h.CPUs = time.Unix(btime, 0), cpus
	if b, err := readFile(fs.Path("meminfo")); err == nil {
		h.MemTotalBytes = parseMemTotal(b)
	}
	if b, err := readFile(fs.Path("self", "auxv")); err == nil {
		if hz := parseAuxvClockTicks(b); hz > 0 {
			h.ClockTicks = hz
		}
	}
	if b, err := readFile(fs.Path("self", "mountinfo")); err == nil {
		root, err := filepath.Abs(fs.root)
		if err != nil {
			root = fs.root
		}
		h.HidePID = parseHidePID(b, root)
	}
	return h, nil
}

// parseProcStat returns btime (unix seconds) and the number of cpuN lines.
func parseProcStat(b []byte) (btime int64, cpus int, err error) {
	found := false
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		switch {
		case len(line) > 3 && string(line[:3]) == "cpu" && line[3] >= '0' && line[3] <= '9':
			cpus++
		case len(line) > 6 && string(line[:6]) == "btime ":
			v, ok := atoi(trimSpace(line[6:]))
			if !ok {
				return 0, 0, fmt.Errorf("%w: stat: bad btime", ErrMalformed)
			}
			btime, found = v, true
		}
	}
	if !found {
		return 0, 0, fmt.Errorf("%w: stat: no btime line", ErrMalformed)
	}
	if cpus == 0 {
		cpus = 1
	}
	return btime, cpus, nil
}

func parseMemTotal(b []byte) uint64 {
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		if key, val, ok := keyValue(line); ok && string(key) == "MemTotal" {
			v, _ := kBToBytes(val)
			return v
		}
	}
	return 0
}

// parseAuxvClockTicks finds AT_CLKTCK in a native-endian 64-bit auxv vector.
func parseAuxvClockTicks(b []byte) uint64 {
	for len(b) >= 16 {
		tag := binary.NativeEndian.Uint64(b)
		val := binary.NativeEndian.Uint64(b[8:])
		if tag == atClkTck {
			return val
		}
		if tag == 0 {
			break
		}
		b = b[16:]
	}
	return 0
}

// parseHidePID finds the hidepid= option of the proc mount at root in
// mountinfo: "22 27 0:21 / /proc rw,relatime shared:13 - proc proc rw,hidepid=2".
// The optional fields before " - " vary in number, so the filesystem type and
// super options are found after that separator. When several proc mounts sit
// on root, the last one (the visible one) counts. A fixture root matches no
// mount point, which reads as "not hidden".
func parseHidePID(b []byte, root string) string {
	mountPoint := escapeMountPoint(filepath.Clean(root))
	hide := ""
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		var f [5][]byte
		if splitFields(line, f[:]) < 5 || string(f[4]) != mountPoint {
			continue
		}
		sep := bytes.Index(line, []byte(" - "))
		if sep < 0 {
			continue
		}
		var g [3][]byte // fstype, source, super options
		if splitFields(line[sep+3:], g[:]) < 3 || string(g[0]) != "proc" {
			continue
		}
		hide = ""
		for opts := g[2]; len(opts) > 0; {
			opt := opts
			if i := indexByte(opts, ','); i >= 0 {
				opt, opts = opts[:i], opts[i+1:]
			} else {
				opts = nil
			}
			if v, ok := bytes.CutPrefix(opt, []byte("hidepid=")); ok && string(v) != "0" && string(v) != "off" {
				hide = string(v)
			}
		}
	}
	return hide
}

// escapeMountPoint escapes a path the way mountinfo shows it (octal for
// space, tab, newline and backslash).
func escapeMountPoint(p string) string {
	return strings.NewReplacer(`\`, `\134`, " ", `\040`, "\t", `\011`, "\n", `\012`).Replace(p)
}
