//go:build linux

package bpfsource

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
	"golang.org/x/sys/unix"
)

// choose.go picks the snapshot source at run time: the /proc Scanner or the
// BPF iterator, by mode and by what the host allows.

// Modes, as --source takes them.
const (
	ModeProc = "proc" // always the /proc Scanner
	ModeBPF  = "bpf"  // the BPF iterator; /proc with a note if it cannot load
	ModeAuto = "auto" // the BPF iterator where Allowed, else /proc
)

// Modes lists the modes, for help texts and errors.
func Modes() []string { return []string{ModeProc, ModeBPF, ModeAuto} }

// ErrMode is returned for a mode that is none of Modes.
var ErrMode = errors.New("unknown snapshot source")

// BTFPath is where the kernel publishes its BTF (CONFIG_DEBUG_INFO_BTF),
// which CO-RE relocates the program against.
const BTFPath = "/sys/kernel/btf/vmlinux"

// Capabilities (include/uapi/linux/capability.h).
const (
	capSysAdmin = 21
	capPerfmon  = 38
	capBPF      = 39
)

// Allowed reports why the BPF source cannot run here, or nil: fs must be
// the host's own /proc (a fixture root is not what the kernel would
// iterate), the process needs CAP_SYS_ADMIN (root) or CAP_BPF with
// CAP_PERFMON in the host's user namespace, the kernel its BTF, iter/task
// and bpf_map_lookup_percpu_elem (Linux 5.19).
func Allowed(fs procwalk.FS) error {
	if root, err := filepath.Abs(fs.Path()); err != nil || root != procwalk.DefaultRoot {
		return fmt.Errorf("--proc is %s, not the host's %s", fs.Path(), procwalk.DefaultRoot)
	}
	if !hasCaps() {
		return errors.New("needs root (CAP_SYS_ADMIN) or CAP_BPF and CAP_PERFMON")
	}
	if !identityUIDs(fs) {
		// Capabilities in a user namespace of our own (a rootless
		// container's root) do not let bpf(2) load a program.
		return errors.New("runs in a user namespace: loading needs root or CAP_BPF and CAP_PERFMON in the host's")
	}
	if _, err := os.Stat(BTFPath); err != nil {
		return fmt.Errorf("no kernel BTF at %s (CONFIG_DEBUG_INFO_BTF)", BTFPath)
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		rel := unix.ByteSliceToString(u.Release[:])
		if !kernelAtLeast(rel, 5, 19) {
			return fmt.Errorf("kernel %s is older than 5.19 (no iter/task before 5.8, no bpf_map_lookup_percpu_elem for exact RSS before 5.19)", rel)
		}
	}
	return nil
}

// kernelAtLeast reports whether a release string ("6.18.44-fc") is at least
// major.minor. An unparsable release is let through: loading will tell.
func kernelAtLeast(release string, major, minor int) bool {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return true
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return true
	}
	return ma > major || ma == major && mi >= minor
}

// hasCaps reports whether the effective set holds CAP_SYS_ADMIN, or CAP_BPF
// and CAP_PERFMON (Linux 5.8 split them off CAP_SYS_ADMIN).
func hasCaps() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	has := func(c uint) bool { return data[c/32].Effective&(1<<(c%32)) != 0 }
	return has(capSysAdmin) || has(capBPF) && has(capPerfmon)
}

// Chosen is the source Choose picked, and why.
type Chosen struct {
	Source procwalk.Source
	Name   string // ModeProc or Name ("bpf")
	// Why says why this source was chosen; every snapshot carries it as
	// its SourceNote, for the self-metrics.
	Why string
	// Warn is set when the source is not the one asked for: --source bpf
	// on a host that does not allow it, or a BPF program that failed to
	// load. Why then is the one note to show the user.
	Warn bool
	bpf  *Source
}

// Close unloads the BPF program, if one was loaded.
func (c *Chosen) Close() error {
	if c.bpf == nil {
		return nil
	}
	return c.bpf.Close()
}

// ChooseOneShot is Choose for a command that takes a snapshot or two and
// ends (ps, tree, sessions, telegraf without --execd, run): there auto
// reads /proc even where the BPF source is allowed, because loading it
// (parsing the kernel's BTF, verifying the program) costs more CPU than it
// saves one scan of a few thousand processes. BenchmarkOneShotRatio at
// 2,467 processes: ps 108 ms of CPU on /proc, 132 ms with the BPF source;
// telegraf exec 148 ms and 175 ms. bpf still asks for it.
func ChooseOneShot(fs procwalk.FS, mode string) (*Chosen, error) { return choose(fs, mode, true, nil) }

// Choose returns the source mode asks for on fs. A BPF source that is not
// allowed or fails to load gives the /proc Scanner and a note saying why:
// a failed load never fails a gather. The error is for an unknown mode.
func Choose(fs procwalk.FS, mode string) (*Chosen, error) { return choose(fs, mode, false, nil) }

// Chooser chooses a run's source once, on its first use: the BPF program
// is loaded at most once, and unloaded by Close.
type Chooser struct {
	// Mode is ModeProc, ModeBPF or ModeAuto ("" is auto).
	Mode string
	// OneShot: a command that takes a snapshot or two and ends
	// (ChooseOneShot); else one that gathers again and again (Choose).
	OneShot bool
	// Loading runs load, the BPF program's load, under the caller's
	// garbage collection policy: it parses the kernel's BTF, megabytes of
	// garbage at once. It runs only when a program is loaded. Nil: load
	// runs as it is.
	Loading func(load func())
	// Note hears why the source is not the one asked for (Chosen.Warn),
	// once; nil: nobody.
	Note func(string)

	chosen *Chosen
}

// Source is the source chosen on fs: on the first call, chosen then.
// The error is for an unknown Mode.
func (c *Chooser) Source(fs procwalk.FS) (procwalk.Source, error) {
	if c.chosen == nil {
		chosen, err := choose(fs, c.Mode, c.OneShot, c.Loading)
		if err != nil {
			return nil, err
		}
		if chosen.Warn && c.Note != nil {
			c.Note(chosen.Why)
		}
		c.chosen = chosen
	}
	return c.chosen.Source, nil
}

// Close unloads the BPF program, if one was loaded.
func (c *Chooser) Close() {
	if c.chosen != nil {
		c.chosen.Close()
	}
}

func choose(fs procwalk.FS, mode string, oneShot bool, loading func(func())) (*Chosen, error) {
	proc := func(why string, warn bool) *Chosen {
		return &Chosen{Source: noted{procwalk.NewScanner(fs), why}, Name: ModeProc, Why: why, Warn: warn}
	}
	switch mode {
	case ModeProc:
		return proc("asked for proc", false), nil
	case "": // an empty PROCWALK_SOURCE: the default
		mode = ModeAuto
	case ModeBPF, ModeAuto:
	default:
		return nil, fmt.Errorf("%w %q: use one of %s", ErrMode, mode, strings.Join(Modes(), ", "))
	}
	if err := Allowed(fs); err != nil {
		if mode == ModeAuto {
			// Not a failure: auto reads /proc where BPF is not allowed.
			return proc("auto: bpf "+err.Error(), false), nil
		}
		return proc(fmt.Sprintf("bpf source not used: %v; read /proc instead", err), true), nil
	}
	if mode == ModeAuto && oneShot {
		return proc("auto: a one-shot command reads /proc (loading the BPF program costs more than it saves one scan; --source bpf loads it)", false), nil
	}
	var s *Source
	var err error
	if loading == nil {
		loading = func(load func()) { load() }
	}
	loading(func() { s, err = Open(fs) })
	if err != nil {
		return proc(fmt.Sprintf("bpf source failed to load: %v; read /proc instead (--source proc skips trying)", err), true), nil
	}
	s.why = "asked for bpf"
	if mode == ModeAuto {
		s.why = "auto: privileges, BTF and kernel allow bpf"
	}
	return &Chosen{Source: s, Name: Name, Why: s.why, bpf: s}, nil
}

// noted is the /proc Scanner stamping each snapshot with why it was
// chosen, for the self-metrics.
type noted struct {
	*procwalk.Scanner
	why string
}

func (n noted) SnapshotSelect(fields procwalk.Fields, sel procwalk.Selector) (*procwalk.Snapshot, error) {
	s, err := n.Scanner.SnapshotSelect(fields, sel)
	if s != nil {
		s.SourceNote = n.why
	}
	return s, err
}
