//go:build linux

package frame

import (
	"os"
	"runtime"
	"runtime/debug"
)

// memory.go is the one owner of procwalk's long-lived memory: how long a
// pipeline's frames stay valid (their snapshots' storage is reused by
// later scans), what a process gives back to the kernel between frames, and
// every call that sets the Go runtime's garbage collection. Consumers
// borrow frames; a frame used after its storage was recycled panics
// (Frame.Check) instead of showing another gather's processes.

// Retention says how long a pipeline's frames stay valid.
type Retention int

const (
	// Recycle: a frame is valid until the next gather, whose scan reuses
	// its storage: a daemon that writes each frame out before the next
	// (telegraf --execd) allocates no Process array per gather.
	Recycle Retention = iota
	// HoldLast: a frame is valid until the gather after next: a live view
	// shows one frame while it gathers the next.
	HoldLast
	// KeepAll: frames are never recycled, the garbage collector frees a
	// frame nobody holds: a Lua state in this process keeps process
	// objects from run to run.
	KeepAll
)

func (r Retention) String() string {
	switch r {
	case Recycle:
		return "recycle: valid until the next gather"
	case HoldLast:
		return "hold-last: valid until the gather after next"
	case KeepAll:
		return "keep-all"
	}
	return "unknown"
}

// Memory is a pipeline's memory policy.
type Memory struct {
	Retention Retention
	// Return gives the kernel back, after each frame Run hands out, what
	// the process does not need until the next gather: the garbage (see
	// returnMemory), the pages of the Process array kept for the next
	// scan (zeroed; the next scan maps them again in one call), and, after
	// start-up and the first two frames only, the pages of procwalk's own
	// binary mapped so far (releaseBinaryPages: see returnMemory). Between
	// gathers a daemon then holds little more than the rate samples and
	// the sessions' counters: execd's 20 MiB at 10,000 processes (README).
	// At 10,000 processes the collection is about 1 ms of CPU, 1 to 7 % of
	// a gather in BenchmarkExecd*ReturnMemory against BenchmarkExecd*,
	// about the noise between runs. With Recycle the array is reused, so a
	// gather leaves about 1 MB of garbage at 10,000 processes; what the
	// peak holds beyond the between-gathers size is data live during the
	// gather, which a lower GOGC or a memory limit cannot free, only chase
	// at a CPU cost: the runtime's GC settings are left alone.
	Return bool
	// Limit, when set, is the runtime's soft memory limit for a frame of
	// n processes, set after each frame Run hands out (LiveViewLimit).
	// Leave it nil when GOMEMLIMIT is set: the person's choice wins.
	Limit func(processes int) int64
}

// LiveViewLimit is a live view's soft memory limit at n processes: 28 MiB
// of the runtime's memory up to 10,000 processes, about 35 MiB resident
// with the binary's pages, in every view (the sessions views hold a
// Grouper's state besides the frames); more in proportion beyond, so the
// collector never chases a live heap the limit cannot hold. It, not a low
// GOGC, bounds a live view's memory: a refresh makes little garbage (rows
// and snapshots reuse their storage), and collecting at GOGC's default
// spends less CPU on marking. At 10,000 processes the live heap after a
// collection is 15-19 MB (a row 120 bytes, a Process 488). At 32 MiB the
// peaks of top's walk through its views came within 1 MiB of the 40 MiB
// goal (41.1 once in CI); at 28 MiB they are 35 MiB with the same CPU a
// refresh (BenchmarkTopViews, top/README.md).
func LiveViewLimit(n int) int64 {
	const bytes = 28 << 20
	return bytes * int64(max(n, 10_000)) / 10_000
}

// Trim returns the memory freed so far to the kernel, now: for a consumer
// that just dropped megabytes (a live view leaving its sessions views
// drops their Grouper).
func (p *Pipeline) Trim() { debug.FreeOSMemory() }

// memoryState is what the policy keeps between frames.
type memoryState struct {
	// processes is the last frame's process count.
	processes int
	// allocatedAtCollection is the heap's cumulative allocation at the
	// last collection returnMemory ran (see collectAfterBytes).
	allocatedAtCollection uint64
	// smaps is releaseBinaryPages' buffer; binaryReleases counts its runs.
	smaps          []byte
	binaryReleases int
	// stats is heapAllocatedBytes' scratch space, made at its first use.
	stats *runtime.MemStats
}

// Release hands back the storage of every frame the retention still
// holds and returns its pages to the kernel: for a consumer idle until its
// next gather, or one leaving a view. No frame gathered so far may be used
// afterwards (Frame.Check panics), but with KeepAll, which recycles none.
func (p *Pipeline) Release() {
	p.monitor.Release()
	if p.cfg.Memory.Retention != KeepAll {
		p.valid = p.gen + 1
	}
}

// betweenFrames is the policy's work once a consumer is done with a frame
// of Run: with Memory.Return, returnMemory; with Memory.Limit, the
// runtime's memory limit for the frame's process count.
func (p *Pipeline) betweenFrames(f Frame) {
	if f.Snapshot != nil {
		p.memory.processes = len(f.Snapshot.Procs)
	}
	if p.cfg.Memory.Return {
		p.returnMemory()
	}
	if p.cfg.Memory.Limit != nil {
		debug.SetMemoryLimit(p.cfg.Memory.Limit(p.memory.processes))
	}
}

// returnMemory gives the kernel back what the process does not need until
// the next gather: the pages of the Process array kept for it (Release),
// the garbage, and the binary's mapped pages. Nothing keeps pointers into
// a Recycle frame's snapshot once it is written: the sampler and the
// grouper keep ProcIDs and copies, sessions their own strings.
//
// On a host of fewer than collectEveryFrameProcs processes the collection
// runs once the gathers since the last one allocated collectAfterBytes: at
// 2,500 processes one frame in three or four then pays a forced
// collection (about a tenth of a gather's CPU), for a peak resident size
// about 1.5 MB higher. On bigger hosts every frame is followed by one, as
// the peak must stay under execd's 20 MiB at 10,000 processes (README).
//
// The binary's pages go back the first binaryReleases times: start-up's,
// when a daemon calls it before its first gather, then those only the
// first gathers ran (arrays and sessions made, not reused). Later gathers
// run through the same pages, which stay mapped: unmapping them after
// every gather took execd's peak only 0.1-0.2 MiB lower at 10,000
// processes (its size between gathers 4 MiB lower), and would make every
// gather map 5-6 MiB again, a cost our benchmarks could not tell from
// their noise (BenchmarkExecdProcess, BPF: 64-74 ms a gather either way).
func (p *Pipeline) returnMemory() {
	p.Release()
	m := &p.memory
	allocated := m.heapAllocatedBytes()
	if m.processes < collectEveryFrameProcs && m.allocatedAtCollection != 0 && allocated-m.allocatedAtCollection < collectAfterBytes {
		return
	}
	debug.FreeOSMemory()
	if m.binaryReleases < binaryReleases {
		releaseBinaryPages(&m.smaps)
		m.binaryReleases++
		if m.binaryReleases == binaryReleases {
			m.smaps = nil
		}
	}
	m.allocatedAtCollection = m.heapAllocatedBytes()
}

// SetReturn sets Memory.Return from now on: a consumer learns it runs as
// a daemon once it does (the same Collector serves exec and execd).
func (p *Pipeline) SetReturn(on bool) { p.cfg.Memory.Return = on }

// ReturnMemory is the policy's work between frames for a frame gathered
// outside Run (a daemon's first, silent gather): returnMemory with
// Memory.Return, nothing otherwise.
func (p *Pipeline) ReturnMemory(f Frame) { p.betweenFrames(f) }

// collectAfterBytes is how much the gathers since returnMemory's last
// collection may allocate before it runs another, on a host of fewer than
// collectEveryFrameProcs processes (a gather there leaves about a quarter
// of a megabyte of garbage).
const (
	collectAfterBytes      = 1 << 20
	collectEveryFrameProcs = 5000
)

// binaryReleases is how many times returnMemory hands back the binary's
// pages: after start-up and after the first two frames.
const binaryReleases = 3

// heapAllocatedBytes is the bytes allocated on the heap since the process
// started, garbage included. runtime.ReadMemStats stops the world for a
// few microseconds (8 on our 2-core VM), twice a frame at most;
// runtime/metrics would read it without stopping it, but its package
// initialisation (0.04 ms, a table of every metric) ran at the start of
// every procwalk process, --version and the one-shot commands too.
func (m *memoryState) heapAllocatedBytes() uint64 {
	if m.stats == nil {
		m.stats = new(runtime.MemStats)
	}
	runtime.ReadMemStats(m.stats)
	return m.stats.TotalAlloc
}

// The process-wide policies: each of procwalk's modes sets the collector
// through one of these, and nothing else calls runtime/debug's setters.

// OneShotGC sets the collector of a command that gathers once and exits
// (ps, tree, sessions, telegraf's exec mode), unless GOGC is set: nearly
// all it allocates is the snapshot, alive until it exits, so a collection
// frees little, and each one runs a mark worker on the idle core (at
// 10,000 processes it cost ps 4% of its CPU and sessions 8%, for no
// smaller peak resident size).
func OneShotGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(oneShotGCPercent)
	}
}

// oneShotGCPercent lets a one-shot command's heap grow to five times its
// live size before a collection (GOGC=400).
const oneShotGCPercent = 400

// CollectingGarbage runs load, which makes megabytes of garbage at once
// (loading a BPF program parses the kernel's BTF), collecting as it goes
// (GOGC=10) and handing the freed memory back after: a long-running
// daemon's peak resident size is not set by its start.
func CollectingGarbage(load func()) {
	gc := debug.SetGCPercent(10)
	defer func() {
		debug.SetGCPercent(gc)
		debug.FreeOSMemory()
	}()
	load()
}

// WorkerGC sets the collector of a script worker: the soft memory limit
// at limitBytes (its budgets plus the runtime's own), so that the
// collector works harder near them rather than let garbage double the
// heap, and, unless GOGC is set, a collection once the heap is five times
// its live size (GOGC=400): each run decodes its parent's frame (a couple
// of megabytes at 2,500 processes) and drops the one before, and at the
// default a collection ran nearly every run (a quarter of a run's CPU at
// 2,500 processes, mostly write barriers while decoding). The limit, not
// GOGC, bounds what a worker holds.
func WorkerGC(limitBytes int64) {
	debug.SetMemoryLimit(limitBytes)
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(workerGCPercent)
	}
}

// workerGCPercent is WorkerGC's GOGC.
const workerGCPercent = 400
