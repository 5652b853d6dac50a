//go:build linux

package procwalk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
	"golang.org/x/sys/unix"
)

// Snapshot is one pass over /proc: every visible process, its tree and an
// account of what could not be seen.
type Snapshot struct {
	Time       time.Time     // when the scan started
	Duration   time.Duration // how long the scan took
	Host       Host          // the host facts the numbers were converted with
	Fields     Fields        // optional fields asked for, for every process
	Selected   Fields        // optional fields a Selector may have asked for some processes
	Procs      []Process     // ascending PID
	Visibility Visibility    // what the scan could not see
	// Source names what took the snapshot: SourceProc (a /proc scan) or
	// another Source's name ("bpf"); SourceNote says why, when it is not
	// what was asked for (a BPF source that could not load falls back to
	// /proc).
	Source, SourceNote string

	parent      []int32 // index of each process's parent in Procs, -1 for roots
	firstChild  []int32
	nextSibling []int32
	// recycled is set when a Monitor handed the storage back to its
	// source: a later scan reuses it for other processes.
	recycled bool
}

// ErrRecycled is the panic value of a snapshot used after its Monitor
// recycled its storage: kept past the Monitor's retention (MonitorConfig's
// Keep and KeepLast; frame.Retention), its processes would be another
// scan's.
var ErrRecycled = errors.New("procwalk: a snapshot used after its Monitor recycled its storage (kept past the retention: MonitorConfig.Keep, KeepLast)")

// Visibility accounts for what a Snapshot could not see. Partial data is
// marked here, never silently missing.
type Visibility struct {
	Listed    int // pid directories listed
	Gone      int // listed but exited before or while being read
	Malformed int // processes with a file that failed to parse (stat: dropped; others: kept)
	// Denied counts, per field name ("io", "smaps" ...), processes whose file
	// the kernel refused to show. "stat" and "statm" count processes dropped
	// because even those were refused (hidepid=noaccess).
	Denied map[string]int
	// HidePID is the proc mount's hidepid option; with it set and without
	// root, other users' processes may be missing or opaque.
	HidePID      string
	OthersHidden bool
	// TimedOut counts processes with a read that blocked past the read
	// timeout (a stuck memory-map lock, a file in a fake root that never
	// answers): kept with stat and statm only and ReadTimedOut set, or
	// dropped when stat or statm itself blocked.
	TimedOut int
}

// Partial reports whether anything was not seen: a process gone mid-scan, a
// denied or malformed file, or processes hidden by hidepid.
func (v Visibility) Partial() bool {
	return v.Gone > 0 || v.Malformed > 0 || len(v.Denied) > 0 || v.OthersHidden || v.TimedOut > 0
}

func (v *Visibility) addDenied(name string) {
	if v.Denied == nil {
		v.Denied = make(map[string]int)
	}
	v.Denied[name]++
}

// deniedFile names the /proc file a denied read was for ("stat", "statm").
func deniedFile(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return filepath.Base(pe.Path)
	}
	return "stat"
}

// SourceProc is Snapshot.Source for a scan of /proc.
const SourceProc = "proc"

// NewSnapshot returns a snapshot of procs taken by another Source than the
// Scanner, its tree built: procs in ascending pid order (sorted here if
// not), with their optional fields already read. The snapshot owns procs.
func NewSnapshot(host Host, fields, selected Fields, procs []Process, v Visibility) *Snapshot {
	if !slices.IsSortedFunc(procs, byPID) {
		slices.SortFunc(procs, byPID)
	}
	s := &Snapshot{Host: host, Fields: fields, Selected: selected &^ fields, Procs: procs, Visibility: v}
	s.buildTree()
	return s
}

func byPID(a, b Process) int { return a.ID.PID - b.ID.PID }

// Scanner takes snapshots, reusing its buffers from one to the next. It is
// not safe for concurrent use; the zero value is not usable, call NewScanner.
type Scanner struct {
	fs   FS
	buf  []byte // file contents
	path []byte // "<pid>/<file>\0" relative to the root fd
	// pidDigits[:pidLen] are the decimal digits of pathPID, kept by
	// setPath: a process's files are read one after another, and
	// formatting its pid for each cost a quarter of a millisecond at
	// 2,500 processes. An array, not a slice: watched copies the Scanner
	// for a goroutine that may be abandoned, which must share no storage.
	pathPID   int
	pidLen    int
	pidDigits [20]byte
	dents     []byte
	pids      []int
	comms     *fsio.Interner // comms: most repeat across scans
	// cmdlines are parsed command lines by their bytes, interned as comms
	// are: a long-running Monitor reads the same interpreters' command lines
	// gather after gather (agents), and would allocate each again.
	cmdlines *cmdlineCache
	spare    []Process // a recycled snapshot's storage, for the next scan
	// procfs says the root is a mounted procfs, whose pid directories are
	// owned by each process's effective uid (FieldOwner); a fixture tree's
	// are owned by whoever unpacked it, so there status serves FieldOwner.
	procfs bool
	// spareReleased says spare's pages went back to the kernel
	// (ReleaseSpare): the next scan maps them again in one call.
	spareReleased bool
	// readTimeout bounds one read (see deadline.go); 0 reads inline,
	// unwatched. stuck are the processes whose read was abandoned; watch
	// is set on the goroutine that scans.
	readTimeout time.Duration
	stuck       *stuckReads
	watch       *readWatch
	// beforeRead, when set (tests), runs at the start of every read, where
	// the kernel would block on a stuck file.
	beforeRead func(pid int, file string)
}

// A Selector picks optional fields for one process, called once its stat
// and statm are read (ID, comm, ppid, state, kernel known): a kind that needs
// a costly file only for a few processes (agents' cmdline) reads it for
// those alone. It may also fill fields itself from elsewhere and mark them
// in p.Read; it must not keep p. Only the fields p.Read marks hold values
// (a source may have filled others, such as IO, before they are asked for).
type Selector struct {
	Fields Fields                  // every field Select may return or fill
	Select func(p *Process) Fields // the fields to read for p besides the scan's
}

// Recycle hands a snapshot's storage back for the next scan to reuse, so a
// steady state of repeated scans does not allocate a Process array per scan.
// The caller must not use s, or anything pointing into it, afterwards.
func (sc *Scanner) Recycle(s *Snapshot) {
	if s != nil && cap(s.Procs) > cap(sc.spare) {
		clear(s.Procs[:cap(s.Procs)]) // drop the strings and slices it holds
		sc.spare, sc.spareReleased = s.Procs[:0], false
		s.Procs = nil
	}
}

// NewScanner returns a Scanner reading fs.
func NewScanner(fs FS) *Scanner {
	return &Scanner{
		fs:     fs,
		procfs: isProcFS(fs.root),
		buf:    make([]byte, 0, 4096),
		path:   make([]byte, 0, 64),
		dents:  make([]byte, 32<<10),
		comms:  &fsio.Interner{Max: fsio.MaxInterned},

		cmdlines: &cmdlineCache{args: make(map[string][]string)},
		stuck:    &stuckReads{},

		readTimeout: DefaultReadTimeout,
	}
}

// Snapshot is a one-off scan; reuse a Scanner when scanning repeatedly.
func (fs FS) Snapshot(fields Fields) (*Snapshot, error) {
	return NewScanner(fs).Snapshot(fields)
}

// Snapshot scans every process once, reading stat and statm and the optional
// fields asked for. It fails only when the root cannot be listed; anything
// wrong with single processes is counted in Visibility.
func (sc *Scanner) Snapshot(fields Fields) (*Snapshot, error) {
	return sc.SnapshotSelect(fields, Selector{})
}

// SnapshotSelect is Snapshot reading, besides fields, what sel selects for
// each process.
func (sc *Scanner) SnapshotSelect(fields Fields, sel Selector) (*Snapshot, error) {
	start := time.Now()
	host, root, err := sc.readRoot()
	if err != nil {
		return nil, err
	}
	defer syscall.Close(root)
	if !slices.IsSorted(sc.pids) {
		slices.Sort(sc.pids)
	}
	if sc.cmdlines.bytes > maxInternedCmdlineBytes*3/4 {
		// Full, or nearly: start again with the lines read from now on.
		clear(sc.cmdlines.args)
		sc.cmdlines.bytes = 0
	}

	procs, cold := sc.spare, sc.spareReleased
	sc.spare, sc.spareReleased = nil, false
	if cap(procs) < len(sc.pids) {
		// Room for a few more: the next scan may list a few more pids.
		procs, cold = make([]Process, 0, len(sc.pids)+len(sc.pids)/16), true
	}
	if cold { // resident storage needs no mapping
		// The pages the listed pids fill; the room left for more is
		// mapped only if used (at 10,000 processes, 0.3 MB less at the
		// peak of a daemon that released them between gathers).
		n := len(sc.pids)
		populatePages(procs[:n:n])
	}
	s := &Snapshot{Time: start, Host: host, Fields: fields, Selected: sel.Fields &^ fields, Procs: procs, Source: SourceProc}
	s.Visibility.Listed = len(sc.pids)
	s.Visibility.HidePID = host.HidePID
	s.Visibility.OthersHidden = host.HidePID != "" && os.Geteuid() != 0
	job := &scanJob{procs: s.Procs, vis: s.Visibility}
	job = sc.watched(job, func(w *Scanner, job *scanJob) { w.scanFrom(root, sc.pids, fields, sel.Select, &host, job) })
	s.Procs, s.Visibility = job.procs, job.vis
	if host.NoSwapInUse && (fields|sel.Fields)&FieldSwap != 0 {
		sc.confirmNoSwap(s.Procs)
	}
	s.buildTree()
	s.Duration = time.Since(start)
	return s, nil
}

// rootDone and rootAbandoned end a root read (readRoot): whichever of the
// reading goroutine and its watcher sets its state first decides.
const (
	rootReading int32 = iota
	rootDone
	rootAbandoned
)

// readRoot reads what a scan needs of the root itself: the host's files
// (stat, meminfo, self/auxv, self/mountinfo), then the root opened and its
// pids listed into sc.pids; the caller closes the root. Bounded as every
// read of a scan is (deadline.go): on a hung mount (a --proc on FUSE, NFS)
// it fails with ErrBlocked after the read timeout, leaving the reading
// goroutine, blocked in the kernel, its buffers; while that read is still
// blocked, later scans fail at once rather than block one more thread.
func (sc *Scanner) readRoot() (Host, int, error) {
	if sc.readTimeout <= 0 {
		return sc.readRootInto(&sc.pids, sc.dents, func(string) {})
	}
	if f := sc.stuck.lookup(0); f != "" {
		return Host{}, -1, fmt.Errorf("%w: reading %s still blocks since an earlier scan (a hung mount?)", ErrBlocked, f)
	}
	type result struct {
		host Host
		root int
		err  error
	}
	pids, dents := sc.pids[:0], sc.dents
	var state atomic.Int32
	var stage atomic.Pointer[string]
	done := make(chan result, 1)
	stuck := sc.stuck
	go func() {
		var r result
		r.host, r.root, r.err = sc.readRootInto(&pids, dents, func(at string) { stage.Store(&at) })
		if state.CompareAndSwap(rootReading, rootDone) {
			done <- r
			return
		}
		if r.err == nil { // abandoned while it blocked: nobody owns the root now
			syscall.Close(r.root)
		}
		stuck.remove(0)
	}()
	timer := time.NewTimer(sc.readTimeout)
	defer timer.Stop()
	select {
	case r := <-done:
		sc.pids = pids
		return r.host, r.root, r.err
	case <-timer.C:
	}
	if !state.CompareAndSwap(rootReading, rootAbandoned) {
		r := <-done // it ended just now
		sc.pids = pids
		return r.host, r.root, r.err
	}
	at := sc.fs.root
	if p := stage.Load(); p != nil {
		at = *p
	}
	stuck.add(0, at)
	// The blocked goroutine keeps the buffers it was given.
	sc.pids, sc.dents = nil, make([]byte, len(dents))
	return Host{}, -1, fmt.Errorf("%w: reading %s blocked for more than %s (a hung mount?)", ErrBlocked, at, sc.readTimeout)
}

// readRootInto is readRoot's reading, inline: stage is told what it reads
// next, to name it should it block.
func (sc *Scanner) readRootInto(pids *[]int, dents []byte, stage func(string)) (Host, int, error) {
	stage(sc.fs.Path("stat") + " (or meminfo, self/auxv, self/mountinfo)")
	if sc.beforeRead != nil {
		sc.beforeRead(0, "stat")
	}
	host, err := sc.fs.Host()
	if err != nil {
		return Host{}, -1, err
	}
	stage(sc.fs.root + " (its listing)")
	root, err := syscall.Open(sc.fs.root, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return Host{}, -1, fmt.Errorf("opening %s: %w", sc.fs.root, Classify(err))
	}
	*pids = (*pids)[:0]
	err = fsio.EachDirent(root, dents, func(name []byte, _ byte) {
		if pid, ok := fsio.PIDName(name); ok {
			*pids = append(*pids, pid)
		}
	})
	if err != nil {
		syscall.Close(root)
		return Host{}, -1, fmt.Errorf("listing %s: %w", sc.fs.root, Classify(err))
	}
	return host, root, nil
}

// ReadProcesses appends to procs the processes of pids, read from /proc
// as a scan reads them (stat, statm, fields and what sel selects, every
// read bounded by the read timeout), with host's units: for another Source
// that learned of pids it could not see itself. A pid gone, refused or
// malformed is left out and counted in v. The error is for a root that
// cannot be opened.
func (sc *Scanner) ReadProcesses(procs []Process, pids []int, fields Fields, sel Selector, host *Host, v *Visibility) ([]Process, error) {
	root, err := syscall.Open(sc.fs.root, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return procs, fmt.Errorf("opening %s: %w", sc.fs.root, Classify(err))
	}
	defer syscall.Close(root)
	job := &scanJob{procs: procs, vis: *v}
	job = sc.watched(job, func(w *Scanner, job *scanJob) { w.scanFrom(root, pids, fields, sel.Select, host, job) })
	*v = job.vis
	return job.procs, nil
}

// scanJob is the state of a scan that survives the goroutine doing it:
// the processes read so far (the last one in progress while a read is),
// what was not seen, and the index of the pid being read.
type scanJob struct {
	watch readWatch
	procs []Process
	vis   Visibility
	next  int
}

// watched runs scan on a goroutine and watches its reads; when one
// blocks past the read timeout it abandons that goroutine and runs scan
// again on fresh buffers from where it stopped: the process in progress is
// re-read without the file that blocked (see readOne). It returns the job
// as the last goroutine left it.
func (sc *Scanner) watched(job *scanJob, scan func(w *Scanner, job *scanJob)) *scanJob {
	if sc.readTimeout <= 0 {
		scan(sc, job)
		return job
	}
	tick := time.NewTicker(sc.readTimeout)
	defer tick.Stop()
	w := new(Scanner)
	*w = *sc
	for {
		w.watch = &job.watch
		done := make(chan struct{})
		go func(w *Scanner, job *scanJob) {
			defer close(done)
			scan(w, job)
		}(w, job)
	wait:
		for {
			select {
			case <-done:
				sc.buf, sc.path, sc.dents = w.buf, w.path, w.dents
				return job
			case <-tick.C:
				if job.watch.stuck() {
					break wait
				}
			}
		}
		// Abandoned: the goroutine, its buffers and its process in
		// progress (the last one) are its own now.
		sc.stuck.add(job.watch.pid, job.watch.file)
		procs := job.procs
		if n := len(procs); n > 0 { // a snapshot's: drop the one in progress
			procs = make([]Process, n-1, cap(job.procs))
			copy(procs, job.procs)
		}
		job = &scanJob{procs: procs, vis: job.vis, next: job.next}
		w = NewScanner(sc.fs) // fresh buffers: the abandoned goroutine keeps the old ones
		w.procfs = sc.procfs
		w.comms, w.stuck, w.readTimeout, w.beforeRead = sc.comms, sc.stuck, sc.readTimeout, sc.beforeRead
		w.cmdlines = sc.cmdlines
		sc.buf, sc.path, sc.dents = w.buf, w.path, w.dents
	}
}

// scanFrom reads pids from job.next on into job.
func (sc *Scanner) scanFrom(root int, pids []int, fields Fields, sel func(*Process) Fields, host *Host, job *scanJob) {
	for ; job.next < len(pids); job.next++ {
		job.procs = append(job.procs, Process{})
		p := &job.procs[len(job.procs)-1]
		err := sc.readOne(root, pids[job.next], fields, sel, host, p)
		if errors.Is(err, errAbandoned) {
			return // job belongs to the goroutine that took over
		}
		if err != nil {
			job.procs = job.procs[:len(job.procs)-1]
			switch {
			case IsGone(err):
				job.vis.Gone++
			case IsDenied(err):
				// hidepid=noaccess lists other users' pids but refuses
				// their files: count them as denied, not as broken.
				job.vis.addDenied(deniedFile(err))
			case errors.Is(err, errTimedOut):
				job.vis.TimedOut++
			default:
				job.vis.Malformed++
			}
			continue
		}
		if p.ReadTimedOut {
			job.vis.TimedOut++
		}
		if p.Malformed != 0 {
			job.vis.Malformed++
		}
		if p.Denied != 0 {
			p.Denied.each(func(f Fields) { job.vis.addDenied(f.String()) })
		}
	}
}

// errTimedOut drops a process whose stat or statm read blocked.
var errTimedOut = errors.New("a read of the process's stat or statm timed out")

// readOne reads pid into p; a process whose earlier read is still blocked
// gets its stat and statm only, and ReadTimedOut.
func (sc *Scanner) readOne(root, pid int, fields Fields, sel func(*Process) Fields, host *Host, p *Process) error {
	switch sc.stuck.lookup(pid) {
	case "":
		return sc.readProcess(root, pid, fields, sel, host, p)
	case "stat", "statm":
		return errTimedOut
	}
	err := sc.readProcess(root, pid, 0, nil, host, p)
	p.ReadTimedOut = true
	return err
}

// setPath sets sc.path to "<pid>/<file>\0".
func (sc *Scanner) setPath(pid int, file string) []byte {
	if sc.pidLen == 0 || pid != sc.pathPID {
		sc.pidLen = len(strconv.AppendInt(sc.pidDigits[:0], int64(pid), 10))
		sc.pathPID = pid
	}
	p := append(sc.path[:0], sc.pidDigits[:sc.pidLen]...)
	p = append(p, '/')
	p = append(p, file...)
	p = append(p, 0)
	sc.path = p
	return p
}

// read reads <pid>/<file> under the root fd into sc.buf.
func (sc *Scanner) read(root, pid int, file string) ([]byte, bool, error) {
	if !sc.watch.enter(pid, file) {
		return nil, false, errAbandoned
	}
	if sc.beforeRead != nil {
		sc.beforeRead(pid, file)
	}
	path := sc.setPath(pid, file)
	fd, err := fsio.Openat(root, path, syscall.O_RDONLY)
	if err != nil {
		if !sc.watch.leave() {
			return nil, false, sc.abandoned(pid)
		}
		return nil, false, pathError("open", sc.fs.root, path, err)
	}
	b, truncated, err := fsio.ReadAllFD(fd, sc.buf, file != "cmdline")
	syscall.Close(fd)
	if !sc.watch.leave() {
		return nil, false, sc.abandoned(pid)
	}
	sc.buf = b[:0]
	if err != nil {
		return nil, false, pathError("read", sc.fs.root, path, err)
	}
	return b, truncated, nil
}

// abandoned is what a read given up on returns once it finally ends: pid
// is no longer stuck.
func (sc *Scanner) abandoned(pid int) error {
	sc.stuck.remove(pid)
	return errAbandoned
}

// cmdlineCache holds interned command lines, shared by a Scanner and the
// copies its scans run on.
type cmdlineCache struct {
	args  map[string][]string
	bytes int // of the keys
}

// maxInternedCmdlineBytes bounds the command lines kept by internCmdline
// (the keys; the parsed strings take as much again): a thousand
// interpreters' lines on a loaded host. A scan reading every process's
// command line (ps's COMMAND) parses the rest without keeping them.
const maxInternedCmdlineBytes = 256 << 10

// internCmdline returns the parsed command line of b, the same slice for
// the same bytes (full, so that an append copies it; never written to).
func (sc *Scanner) internCmdline(b []byte) []string {
	c := sc.cmdlines
	if args, ok := c.args[string(b)]; ok {
		return args
	}
	args := slices.Clip(parseCmdline(b))
	if c.bytes+len(b) <= maxInternedCmdlineBytes {
		c.args[string(b)] = args
		c.bytes += len(b)
	}
	return args
}

// readProcess fills p. An error means the process must be dropped: it is
// gone, or its stat/statm is unreadable or malformed.
func (sc *Scanner) readProcess(root, pid int, fields Fields, sel func(*Process) Fields, host *Host, p *Process) error {
	b, _, err := sc.read(root, pid, "stat")
	if err != nil {
		return err
	}
	st, comm, err := parseStatNoComm(b)
	if err != nil {
		return fmt.Errorf("pid %d: %w", pid, err)
	}
	hz := float64(host.ClockTicks)
	p.ID = ProcID{PID: pid, StartTicks: st.StartTicks}
	p.PPID, p.PGRP, p.SID, p.TTY = st.PPID, st.PGRP, st.SID, st.TTY
	p.Comm = sc.comms.String(comm)
	p.State, p.Kernel, p.Threads = st.State, st.Kernel(), st.Threads
	p.Start = host.BootTime.Add(ticksToDuration(st.StartTicks, host.ClockTicks))
	p.UserCPUSeconds = float64(st.UTime) / hz
	p.SystemCPUSeconds = float64(st.STime) / hz
	p.ChildrenUserCPUSeconds = float64(st.CUTime) / hz
	p.ChildrenSystemCPUSeconds = float64(st.CSTime) / hz
	p.VSizeBytes = st.VSizeBytes

	// RSS comes from statm, not from stat's rss field: stat reads the
	// per-CPU RSS counters without summing them, statm sums them (newer
	// kernels). On a 2-CPU 6.18 VM they differed for 2,432 of 2,489
	// processes, by up to 112 pages; the error grows with the CPU count.
	// A kernel thread or a zombie has no memory of its own (the kernel
	// shows its statm as zeros): its statm is not read.
	if !p.Kernel && !p.Zombie() {
		b, _, err = sc.read(root, pid, "statm")
		if err != nil {
			return err
		}
		sm, err := parseStatm(b)
		if err != nil {
			return fmt.Errorf("pid %d: %w", pid, err)
		}
		page := host.PageSizeBytes
		p.RSSBytes = sm.ResidentPages * page
		p.SharedBytes, p.TextBytes, p.DataBytes = sm.SharedPages*page, sm.TextPages*page, sm.DataPages*page
	}
	p.StartStack = st.StartStack

	if sel != nil {
		fields = (fields | sel(p)) &^ p.Read
	}
	fields = sc.reads(fields, host.NoSwapInUse)
	var gone error
	fields.each(func(f Fields) {
		if gone != nil {
			return
		}
		err := sc.readField(root, p, f)
		switch {
		case err == nil:
			p.Read |= f
		case errors.Is(err, errAbandoned):
			gone = err // the goroutine that took over owns the rest
		case errors.Is(err, errNotApplicable):
		case IsDenied(err):
			p.Denied |= f
		case IsGone(err):
			if !sc.alive(root, p.ID) {
				gone = err
			}
			// Still there: the file does not apply (exe of a zombie).
		default:
			p.Malformed |= f
		}
	})
	return gone
}

// ReadMore reads optional fields f of processes of an earlier snapshot of
// this Scanner's FS: a caller that needs a costly file for a few processes
// it picked from the snapshot (the biggest members of each session) reads
// it for those alone. A field is read only where the process has no outcome
// for it yet (not in Read, Denied or Malformed). A process that has exited
// since, or whose pid now names another process, keeps none of what was
// read: its Read lacks those bits, as for any field not read. The error is
// for a root that cannot be opened.
func (sc *Scanner) ReadMore(procs []*Process, f Fields) error {
	root, err := syscall.Open(sc.fs.root, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening %s: %w", sc.fs.root, Classify(err))
	}
	defer syscall.Close(root)
	noSwap := f&FieldSwap != 0 && sc.fs.noSwapInUse()
	sc.watched(&scanJob{}, func(w *Scanner, job *scanJob) { w.readMoreFrom(root, procs, f, noSwap, job) })
	if noSwap {
		sc.confirmNoSwapOf(func(yield func(*Process) bool) {
			for _, p := range procs {
				if !yield(p) {
					return
				}
			}
		})
	}
	return nil
}

// reads turns the fields wanted of a process into the reads that serve
// them: status serves FieldOwner and FieldSwap, and is read for them when
// nothing cheaper does (a fixture tree's owners, swap in use).
func (sc *Scanner) reads(f Fields, noSwapInUse bool) Fields {
	if f&FieldStatus != 0 {
		return f &^ (FieldOwner | FieldSwap)
	}
	if f&FieldOwner != 0 && !sc.procfs || f&FieldSwap != 0 && !noSwapInUse {
		return f&^(FieldOwner|FieldSwap) | FieldStatus
	}
	return f
}

// owner is the owner of <pid>'s directory under the root fd: its
// effective uid (FieldOwner).
func (sc *Scanner) owner(root, pid int) (uint32, error) {
	if !sc.watch.enter(pid, "") {
		return 0, errAbandoned
	}
	path := sc.setPath(pid, "")
	uid, err := fsio.OwnerAt(root, path)
	if !sc.watch.leave() {
		return 0, sc.abandoned(pid)
	}
	if err != nil {
		return 0, pathError("stat", sc.fs.root, path, err)
	}
	return uid, nil
}

// confirmNoSwap checks meminfo again after a scan that gave processes a
// VmSwap of 0 without reading it because no swap was in use: if swap came
// into use meanwhile, those values are unknown, and FieldSwap leaves
// their Read (absent, never a made-up 0).
func (sc *Scanner) confirmNoSwap(procs []Process) {
	sc.confirmNoSwapOf(func(yield func(*Process) bool) {
		for i := range procs {
			if !yield(&procs[i]) {
				return
			}
		}
	})
}

func (sc *Scanner) confirmNoSwapOf(procs func(yield func(*Process) bool)) {
	if sc.fs.noSwapInUse() {
		return
	}
	for p := range procs {
		if p.Read&(FieldStatus|FieldSmaps) == 0 {
			p.Read &^= FieldSwap
		}
	}
}

// isProcFS reports whether root is a mounted procfs.
func isProcFS(root string) bool {
	var st unix.Statfs_t
	return unix.Statfs(root, &st) == nil && st.Type == unix.PROC_SUPER_MAGIC
}

// readMoreFrom is ReadMore from procs[job.next] on. Each process is read
// into a copy, kept only when the reads end normally: an abandoned
// goroutine writes nothing the caller sees. A process whose earlier read
// is still blocked is not read again and gets ReadTimedOut.
func (sc *Scanner) readMoreFrom(root int, procs []*Process, f Fields, noSwapInUse bool, job *scanJob) {
	for ; job.next < len(procs); job.next++ {
		p := procs[job.next]
		want := f &^ (p.Read | p.Denied | p.Malformed)
		if want == 0 {
			continue
		}
		want = sc.reads(want, noSwapInUse)
		if sc.stuck.lookup(p.ID.PID) != "" {
			p.ReadTimedOut = true
			continue
		}
		q := *p
		abandoned := false
		want.each(func(field Fields) {
			if abandoned {
				return
			}
			switch err := sc.readField(root, &q, field); {
			case err == nil:
				q.Read |= field
			case errors.Is(err, errAbandoned):
				abandoned = true
			case IsDenied(err):
				q.Denied |= field
			case errors.Is(err, errNotApplicable), IsGone(err):
			default:
				q.Malformed |= field
			}
		})
		if abandoned {
			return
		}
		// The files were p's only if p is still there after reading them:
		// a pid is not reused while its process lives.
		if sc.alive(root, p.ID) {
			*p = q
		}
	}
}

// errNotApplicable marks an optional file that a process legitimately lacks.
var errNotApplicable = errors.New("not applicable")

func (sc *Scanner) readField(root int, p *Process, f Fields) error {
	pid := p.ID.PID
	switch f {
	case FieldStatus:
		b, _, err := sc.read(root, pid, "status")
		if err != nil {
			return err
		}
		st, err := parseStatus(b)
		if err != nil {
			return err
		}
		p.RealUID, p.EffectiveUID, p.SwapBytes = st.RealUID, st.EffectiveUID, st.SwapBytes
		p.VoluntaryCtxSwitches, p.InvoluntaryCtxSwitches = st.VoluntaryCtxSwitches, st.InvoluntaryCtxSwitches
		p.Read |= FieldOwner | FieldSwap // status holds both
	case FieldOwner:
		uid, err := sc.owner(root, pid)
		if err != nil {
			return err
		}
		p.EffectiveUID = int(uid)
	case FieldSwap:
		// Reached only when meminfo said no swap is in use (reads):
		// then no process has any.
		p.SwapBytes = 0
	case FieldCmdline:
		b, truncated, err := sc.read(root, pid, "cmdline")
		if err != nil {
			return err
		}
		p.Cmdline, p.CmdlineTruncated = sc.internCmdline(b), truncated
	case FieldExe, FieldCwd:
		if f == FieldExe && (p.Kernel || p.Zombie()) {
			return errNotApplicable // no executable to point at
		}
		name := "exe"
		if f == FieldCwd {
			name = "cwd"
		}
		link, err := sc.readlink(root, pid, name)
		if err != nil {
			return err
		}
		if f == FieldExe {
			p.Exe = link
		} else {
			p.Cwd = link
		}
	case FieldIO:
		b, _, err := sc.read(root, pid, "io")
		if err != nil {
			return err
		}
		if p.IO, err = parseIO(b); err != nil {
			return err
		}
	case FieldSmaps:
		if p.Kernel || p.Zombie() {
			return errNotApplicable
		}
		b, _, err := sc.read(root, pid, "smaps_rollup")
		if err != nil {
			return err
		}
		if len(b) == 0 {
			return errNotApplicable // exited between stat and here, or no mm
		}
		if p.Smaps, err = parseSmapsRollup(b); err != nil {
			return err
		}
		p.SwapBytes = p.Smaps.SwapBytes
		p.Read |= FieldSwap
	case FieldFDs:
		if p.Zombie() {
			return errNotApplicable
		}
		n, err := sc.countFDs(root, pid)
		if err != nil {
			return err
		}
		p.FDs = n
	case FieldCgroup:
		b, _, err := sc.read(root, pid, "cgroup")
		if err != nil {
			return err
		}
		if p.Cgroups, err = ParseCgroup(b); err != nil {
			return err
		}
	case FieldOOMScore:
		b, _, err := sc.read(root, pid, "oom_score")
		if err != nil {
			return err
		}
		if p.OOMScore, err = parseOOMScore(b); err != nil {
			return err
		}
	}
	return nil
}

// readlink reads the link <pid>/<name> into sc.buf. readlink(2) cuts a
// target longer than the buffer without an error, so a target that fills the
// buffer is read again into a bigger one. The kernel gives at most PATH_MAX
// bytes; a fixture link past MaxFileBytes is malformed, never returned cut.
func (sc *Scanner) readlink(root, pid int, name string) (string, error) {
	path := sc.setPath(pid, name)
	for size := max(cap(sc.buf), 256); ; size *= 2 {
		if cap(sc.buf) < size {
			sc.buf = make([]byte, 0, size)
		}
		buf := sc.buf[:size]
		if !sc.watch.enter(pid, name) {
			return "", errAbandoned
		}
		n, err := readlinkat(root, path, buf)
		if !sc.watch.leave() {
			return "", sc.abandoned(pid)
		}
		if err != nil {
			return "", pathError("readlink", sc.fs.root, path, err)
		}
		if n < size {
			return string(buf[:n]), nil
		}
		if size >= fsio.MaxFileBytes {
			return "", fmt.Errorf("%w: %s/%d/%s: link target over %d bytes", ErrMalformed, sc.fs.root, pid, name, fsio.MaxFileBytes)
		}
	}
}

func (sc *Scanner) countFDs(root, pid int) (int, error) {
	if !sc.watch.enter(pid, "fd") {
		return 0, errAbandoned
	}
	path := sc.setPath(pid, "fd")
	fd, err := fsio.Openat(root, path, syscall.O_RDONLY|syscall.O_DIRECTORY)
	if err != nil {
		if !sc.watch.leave() {
			return 0, sc.abandoned(pid)
		}
		return 0, pathError("open", sc.fs.root, path, err)
	}
	defer syscall.Close(fd)
	n := 0
	err = fsio.EachDirent(fd, sc.dents, func(name []byte, _ byte) {
		if name[0] != '.' {
			n++
		}
	})
	if !sc.watch.leave() {
		return 0, sc.abandoned(pid)
	}
	if err != nil {
		return 0, pathError("read", sc.fs.root, path, err)
	}
	return n, nil
}

// alive reports whether pid still exists with the same start time; used on
// the error path to tell "exited mid-scan" from "file does not apply".
func (sc *Scanner) alive(root int, id ProcID) bool {
	b, _, err := sc.read(root, id.PID, "stat")
	if err != nil {
		return false
	}
	st, _, err := parseStatNoComm(b)
	return err == nil && st.StartTicks == id.StartTicks && st.State != 'X'
}

// ticksToDuration converts clock ticks without overflowing: ticks*1e9 would
// overflow int64 after about three years of uptime at 100 Hz.
func ticksToDuration(ticks, hz uint64) time.Duration {
	return time.Duration(ticks/hz)*time.Second + time.Duration(ticks%hz)*time.Second/time.Duration(hz)
}
