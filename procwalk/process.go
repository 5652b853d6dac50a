//go:build linux

package procwalk

import (
	"fmt"
	"path"
	"strings"
	"time"
)

// ProcID names one process for its whole life: a pid alone is reused by the
// kernel, a pid with its start time is unique within a boot. Use it for rates
// across snapshots, session membership and, above all, before any signal.
type ProcID struct {
	PID int // process id (thread group id)
	// StartTicks is stat field 22: clock ticks (USER_HZ) from boot to the
	// process's start. Exact, unlike a wall-clock time derived from it.
	StartTicks uint64
}

func (id ProcID) String() string { return fmt.Sprintf("%d@%d", id.PID, id.StartTicks) }

// Process is one process as seen by one Snapshot. Fields after the "optional"
// mark are valid only when Read has the matching Fields bit.
type Process struct {
	ID      ProcID
	PPID    int
	PGRP    int
	SID     int // session id (setsid); a tmux pane's shell leads its own
	TTY     int // tty_nr: controlling terminal device number, 0 for none
	Comm    string
	Threads int
	Start   time.Time // absolute: btime + StartTicks/USER_HZ
	State   byte      // R S D Z T t X I ...
	Kernel  bool      // a kernel thread (PF_KTHREAD)
	// CmdlineTruncated (FieldCmdline): cmdline was longer than 256 KiB and
	// is cut there. The one-byte fields and Read, Denied and Malformed sit
	// together so that the struct has no padding: a Snapshot holds one
	// Process per process, 10,000 of them on a busy host.
	CmdlineTruncated bool
	// ReadTimedOut: a read of one of its files blocked past the read
	// timeout (see Visibility.TimedOut): only stat and statm were read.
	ReadTimedOut bool

	// Read holds the optional fields read successfully; Denied those the
	// kernel refused (ptrace rules, hidepid); Malformed those that failed to
	// parse. A field asked for but in none of the three does not apply
	// (e.g. exe and smaps of a kernel thread or zombie).
	Read, Denied, Malformed Fields

	UserCPUSeconds           float64
	SystemCPUSeconds         float64
	ChildrenUserCPUSeconds   float64 // reaped children
	ChildrenSystemCPUSeconds float64

	VSizeBytes  uint64
	RSSBytes    uint64 // resident: over-counts pages shared with other processes
	SharedBytes uint64 // resident file-backed and shmem pages
	TextBytes   uint64
	DataBytes   uint64 // data + stack
	// StartStack (stat field 28) is where the main thread's stack starts:
	// an exec puts a new one, at a random address where address-space
	// randomisation is on, so what only an exec changes (an interpreter's
	// command line) may be kept while it and the comm stay. 0 when the
	// kernel hides it (a process the reader may not trace) or there is no
	// memory (kernel threads, zombies); the BPF source shows it for every
	// process with memory.
	StartStack uint64

	// Optional fields, each with the Fields bit that reads it.
	RealUID                int          // FieldStatus
	EffectiveUID           int          // FieldOwner (the owner of /proc/<pid>), or FieldStatus, which sets FieldOwner too
	SwapBytes              uint64       // FieldSwap: VmSwap (FieldStatus), 0 on a host with no swap in use; FieldSmaps overrides with its own Swap
	VoluntaryCtxSwitches   uint64       // FieldStatus
	InvoluntaryCtxSwitches uint64       // FieldStatus
	Cmdline                []string     // FieldCmdline: the arguments; empty for kernel threads and zombies (CmdlineTruncated above)
	Exe                    string       // FieldExe: the executable's path (" (deleted)" when replaced)
	Cwd                    string       // FieldCwd: the working directory
	IO                     IO           // FieldIO: byte and syscall counters, reaped children included
	Smaps                  SmapsRollup  // FieldSmaps: RSS, PSS, USS, swap in bytes
	FDs                    int          // FieldFDs: open file descriptors
	Cgroups                []CgroupLine // FieldCgroup: one per hierarchy
	OOMScore               int          // FieldOOMScore: the OOM killer's badness, higher goes first

	// Rates is filled by a Sampler; zero (Measured false) until a process
	// has been seen twice.
	Rates Rates
}

// Zombie reports whether the process has exited but is not yet reaped.
func (p *Process) Zombie() bool { return p.State == 'Z' }

// CPUSeconds is the user plus system CPU time the process has used itself.
func (p *Process) CPUSeconds() float64 { return p.UserCPUSeconds + p.SystemCPUSeconds }

// Name is argv[0]'s base name when the cmdline was read and argv[0] is a
// path, the comm otherwise. argv[0] holding a space is not taken for a
// path: it is a title the process wrote over its arguments ("sshd:
// dev@pts/3", "nginx: worker process"), whose last '/' separates nothing.
func (p *Process) Name() string {
	if len(p.Cmdline) == 0 || p.Cmdline[0] == "" || strings.ContainsRune(p.Cmdline[0], ' ') {
		return p.Comm
	}
	return path.Base(p.Cmdline[0])
}

// Age is how long the process has run at t.
func (p *Process) Age(t time.Time) time.Duration { return t.Sub(p.Start) }
