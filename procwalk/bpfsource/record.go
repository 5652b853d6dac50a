//go:build linux

package bpfsource

import (
	"math/bits"
	"structs"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// record.go turns the iterator's records into Processes: the raw kernel
// values (ns, pages, state bits) converted exactly as the kernel converts
// them for /proc/<pid>/stat, statm and status (fs/proc/array.c,
// fs/proc/task_mmu.c), so that both sources give the same numbers.

// Record kinds: the first uint32 of each record (REC_* in bpf/task.c).
const (
	recProcess = 1
	recThread  = 2
)

// pfKthread is PF_KTHREAD (include/linux/sched.h): a kernel thread.
const pfKthread = 0x00200000

// stateLetter is task_state_index() (include/linux/sched.h) indexing
// "RSDTtXZPI", the letters of /proc/<pid>/stat's state field.
func stateLetter(state, exitState uint32) byte {
	const (
		taskUninterruptible = 0x2
		taskReport          = 0x7f   // RUNNING..PARKED, exit states included
		taskNoLoad          = 0x400  // with UNINTERRUPTIBLE: TASK_IDLE
		taskReportIdle      = 0x80   // TASK_REPORT + 1
		taskRTLockWait      = 0x1000 // 5.14+: shown as D
		taskFrozen          = 0x8000 // 6.1+: shown as D
	)
	s := (state | exitState) & taskReport
	if state&(taskUninterruptible|taskNoLoad) == taskUninterruptible|taskNoLoad {
		s = taskReportIdle
	}
	if state&(taskRTLockWait|taskFrozen) != 0 {
		s = taskUninterruptible
	}
	return "RSDTtXZPI"[bits.Len32(s)] // fls()
}

// nsToTicks is nsec_to_clock_t() (kernel/time/time.c) for a USER_HZ that
// divides a second: whole ticks, truncated.
func nsToTicks(ns, hz uint64) uint64 { return ns / (uint64(time.Second) / hz) }

// adjustCPU is cputime_adjust() (kernel/sched/cputime.c): /proc/<pid>/stat
// scales the tick-sampled user and system times so that they add up to the
// precisely accounted runtime rtime, and never reports less than it did
// before (prev, the process's signal->prev_cputime). The kernel also
// stores the result in prev; this reads it without changing it, so a later
// read of /proc still starts from the same prev. All in ns.
func adjustCPU(utime, stime, rtime, prevU, prevS uint64) (u, s uint64) {
	if prevS+prevU >= rtime {
		return prevU, prevS
	}
	switch {
	case stime == 0:
		utime = rtime
	case utime == 0:
		stime = rtime
	default:
		// mul_u64_u64_div_u64: stime*rtime/(stime+utime) in 128 bits; the
		// quotient is at most rtime, so Div64 cannot overflow.
		hi, lo := bits.Mul64(stime, rtime)
		stime, _ = bits.Div64(hi, lo, stime+utime)
		stime = min(stime, rtime)
	}
	stime = max(stime, prevS)
	utime = rtime - stime
	if utime < prevU {
		utime = prevU
		stime = rtime - utime
	}
	return utime, stime
}

// converter holds what converting records needs: the host's units and the
// comm strings interned across gathers.
type converter struct {
	hz       uint64 // USER_HZ
	page     uint64 // bytes
	bootTime time.Time
	offsetNs uint64 // the reader's time namespace's boottime offset
	statusOK bool   // uids are the reader's: fill FieldStatus
	comms    fsio.Interner
}

// process fills p from r as the /proc source would from stat and statm
// (and status, when statusOK).
func (c *converter) process(r *taskProcessRec, p *procwalk.Process) {
	hz := c.hz
	ticks := nsToTicks(r.StartBoottime+c.offsetNs, hz)
	p.ID = procwalk.ProcID{PID: int(r.Pid), StartTicks: ticks}
	p.PPID, p.PGRP, p.SID, p.TTY = int(r.Ppid), int(r.Pgrp), int(r.Sid), int(r.TtyNr)
	p.Comm = c.comm(r.Comm[:])
	p.State = stateLetter(r.State, r.ExitState)
	p.Kernel = r.Flags&pfKthread != 0
	p.Threads = int(r.Threads)
	// As the Scanner's ticksToDuration: no overflow after years of uptime.
	p.Start = c.bootTime.Add(time.Duration(ticks/hz)*time.Second + time.Duration(ticks%hz)*time.Second/time.Duration(hz))
	p.ChildrenUserCPUSeconds = float64(nsToTicks(r.Cutime, hz)) / float64(hz)
	p.ChildrenSystemCPUSeconds = float64(nsToTicks(r.Cstime, hz)) / float64(hz)

	page := c.page
	p.VSizeBytes = r.TotalVm * page
	shared := r.RssFile + r.RssShmem
	p.RSSBytes = (shared + r.RssAnon) * page
	p.SharedBytes = shared * page
	if r.EndCode > r.StartCode {
		// PAGE_ALIGN(end_code) - (start_code & PAGE_MASK), in pages
		p.TextBytes = ((r.EndCode+page-1)&^(page-1) - r.StartCode&^(page-1)) / page * page
	}
	p.DataBytes = (r.DataVm + r.StackVm) * page
	p.StartStack = r.StartStack
	if c.statusOK {
		p.RealUID, p.EffectiveUID = int(r.Uid), int(r.Euid)
		p.SwapBytes = r.RssSwap * page
		p.VoluntaryCtxSwitches, p.InvoluntaryCtxSwitches = r.Nvcsw, r.Nivcsw
		p.Read |= procwalk.FieldStatus | procwalk.FieldOwner | procwalk.FieldSwap // status's values
	}
}

// cpu sets p's CPU times from the process's totals over its threads.
func (c *converter) cpu(p *procwalk.Process, utime, stime, rtime, prevU, prevS uint64) {
	u, s := adjustCPU(utime, stime, rtime, prevU, prevS)
	hz := c.hz
	p.UserCPUSeconds = float64(nsToTicks(u, hz)) / float64(hz)
	p.SystemCPUSeconds = float64(nsToTicks(s, hz)) / float64(hz)
}

// comm returns the interned comm up to its NUL; most names repeat across
// gathers.
func (c *converter) comm(raw []int8) string {
	var b [16]byte
	n := 0
	for ; n < len(raw) && raw[n] != 0; n++ {
		b[n] = byte(raw[n])
	}
	return c.comms.String(b[:n])
}

// ioCounters is the generated type of a record's io counters (struct
// io_counters in bpf/task.c), the same in process and thread records.
type ioCounters = struct {
	_                   structs.HostLayout
	Rchar               uint64
	Wchar               uint64
	Syscr               uint64
	Syscw               uint64
	ReadBytes           uint64
	WriteBytes          uint64
	CancelledWriteBytes uint64
}

// ioOf converts a record's io counters.
func ioOf(c *ioCounters) procwalk.IO {
	return procwalk.IO{RChar: c.Rchar, WChar: c.Wchar, SyscR: c.Syscr, SyscW: c.Syscw,
		ReadBytes: c.ReadBytes, WriteBytes: c.WriteBytes, CancelledWriteBytes: c.CancelledWriteBytes}
}

// addIO adds b to a, as the kernel sums a process's threads for
// /proc/<pid>/io.
func addIO(a *procwalk.IO, b procwalk.IO) {
	a.RChar += b.RChar
	a.WChar += b.WChar
	a.SyscR += b.SyscR
	a.SyscW += b.SyscW
	a.ReadBytes += b.ReadBytes
	a.WriteBytes += b.WriteBytes
	a.CancelledWriteBytes += b.CancelledWriteBytes
}
