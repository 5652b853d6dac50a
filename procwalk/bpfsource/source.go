//go:build linux

package bpfsource

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/internal/fsio"
	"golang.org/x/sys/unix"
)

// Name is Snapshot.Source for a snapshot this package's Source took.
const Name = "bpf"

// Source takes snapshots with a BPF task iterator: one read(2) stream of a
// record per task replaces opening and reading stat and statm of every
// process. Optional fields it cannot give (cmdline, cwd, io, smaps ...) are
// read from /proc, for the processes that need them, by a Scanner of the
// same FS. It is not safe for concurrent use; Close releases the program.
type Source struct {
	fs      procwalk.FS
	scanner *procwalk.Scanner // optional fields, and the fallback
	objs    taskObjects
	iter    iterLink
	conv    converter

	raw     []byte   // the records, chunk by chunk; 8-byte aligned (alignedBytes)
	dents   []byte   // getdents buffer for listing /proc
	listed  []int    // pids /proc lists
	hidden  []int    // of those, pids the iterator did not show
	totals  []totals // per process, parallel to the Procs being built
	threads []taskThreadRec
	spare   []procwalk.Process // a recycled snapshot's storage
	// rssPartial counts the last gather's processes whose RSS counters
	// lacked their per-CPU parts (rss_partial): said in the source note.
	rssPartial int
	groups     map[procwalk.Fields][]*procwalk.Process
	why        string // SourceNote of its snapshots: why it was chosen
}

// totals are a process's counters summed over its threads, as
// /proc/<pid>/stat sums them (do_task_stat with whole set), kept while a
// gather decodes: 80 bytes a process, 0.8 MB at 10,000.
type totals struct {
	pid                               int
	utime, stime, rtime, prevU, prevS uint64 // ns
	minFlt, majFlt                    uint64
	cgroupID                          uint64
	// ioOK says the kernel keeps io counters: the process's IO, summed
	// over its threads into Process.IO as /proc/<pid>/io sums them, is
	// given to the processes that ask for FieldIO (readOptional), and
	// cleared in the others.
	ioOK bool
}

// Record sizes: the C structs, which the generated Go types mirror.
const (
	processRecSize = int(unsafe.Sizeof(taskProcessRec{}))
	threadRecSize  = int(unsafe.Sizeof(taskThreadRec{}))
)

// Open loads and attaches the iterator program against the running
// kernel's BTF. fs must be the host's /proc (the iterator sees the live
// kernel, not a fixture). The error says what failed: no BTF, no
// permission (CAP_BPF and CAP_PERFMON, or root), a kernel without iter/task
// (before 5.8), a verifier refusal.
func Open(fs procwalk.FS) (*Source, error) {
	host, err := fs.Host()
	if err != nil {
		return nil, err
	}
	s := &Source{fs: fs, scanner: procwalk.NewScanner(fs), groups: make(map[procwalk.Fields][]*procwalk.Process)}
	s.conv = converter{hz: host.ClockTicks, page: host.PageSizeBytes, comms: fsio.Interner{Max: fsio.MaxInterned}}
	if s.conv.hz == 0 || uint64(time.Second)%s.conv.hz != 0 {
		return nil, fmt.Errorf("USER_HZ %d does not divide a second: start and CPU ticks would not match /proc", s.conv.hz)
	}
	s.conv.offsetNs = boottimeOffset(fs)
	s.conv.statusOK = identityUIDs(fs)
	spec, err := loadTask()
	if err != nil {
		return nil, fmt.Errorf("loading the BPF task iterator: %w", err)
	}
	// The program sums each RSS counter's per-CPU parts over the possible
	// CPUs, as statm does.
	cpus, err := possibleCPUs()
	if err != nil {
		return nil, err
	}
	if err := spec.Variables["nr_cpus"].Set(cpus); err != nil {
		return nil, fmt.Errorf("loading the BPF task iterator: %w", err)
	}
	if err := spec.LoadAndAssign(&s.objs, nil); err != nil {
		return nil, fmt.Errorf("loading the BPF task iterator: %w", err)
	}
	s.iter, err = attachIter(s.objs.ProcwalkTasks.FD())
	if err != nil {
		s.objs.Close()
		return nil, fmt.Errorf("attaching the BPF task iterator: %w", err)
	}
	return s, nil
}

// Close detaches and unloads the program.
func (s *Source) Close() error {
	return errors.Join(s.iter.close(), s.objs.Close())
}

// SnapshotSelect takes a snapshot with the iterator, then reads fields and
// what sel selects from /proc for the processes that need them. If the
// iterator cannot be read, the snapshot is a /proc scan, with a note
// saying why (SourceNote).
func (s *Source) SnapshotSelect(fields procwalk.Fields, sel procwalk.Selector) (*procwalk.Snapshot, error) {
	start := time.Now()
	host, err := s.fs.Host()
	if err != nil {
		return nil, err
	}
	s.conv.bootTime = host.BootTime
	// /proc's listing, taken first, sizes the Process array and finds any
	// process the iterator does not show.
	listErr := s.listPids()
	if listErr != nil {
		s.listed = s.listed[:0]
	}
	procs, err := s.iterate(len(s.listed))
	if err != nil {
		snap, perr := s.scanner.SnapshotSelect(fields, sel)
		if perr != nil {
			return nil, perr
		}
		snap.SourceNote = fmt.Sprintf("the BPF task iterator failed (%v): read /proc instead", err)
		return snap, nil
	}
	v := procwalk.Visibility{HidePID: host.HidePID}
	s.readOptional(procs, fields, sel, host.HidePID != "" && listErr == nil)
	for i := range procs {
		p := &procs[i]
		if p.Malformed != 0 {
			v.Malformed++
		}
		for f := procwalk.Fields(1); f != 0 && f <= p.Denied; f <<= 1 {
			if p.Denied&f != 0 {
				if v.Denied == nil {
					v.Denied = make(map[string]int)
				}
				v.Denied[f.String()]++
			}
		}
	}
	// A process /proc lists but the iterator did not show (a host may hide
	// tasks from BPF programs: our test VM's pid 1) is read from /proc:
	// never an undercount.
	note := s.why
	if listErr != nil {
		note += fmt.Sprintf("; listing %s to check the iterator failed: %v", s.fs.Root(), listErr)
	} else if s.findHidden(procs); len(s.hidden) > 0 {
		n := len(procs)
		more := fields
		if s.conv.statusOK {
			more |= procwalk.FieldStatus // as the iterator fills it for the others
		}
		if procs, err = s.scanner.ReadProcesses(procs, s.hidden, more, sel, &host, &v); err != nil {
			return nil, err
		}
		note += fmt.Sprintf("; %d of %d processes hidden from the iterator read from /proc", len(procs)-n, len(s.hidden))
	}
	if s.rssPartial > 0 {
		note += rssPartialNote(s.rssPartial)
	}
	v.Listed = len(procs) + v.Gone
	if s.conv.statusOK {
		// Every process has status's values, the iterator's (or a hidden
		// one's status, read above): the snapshot says so, so that a
		// session's swap is known as each member's is.
		fields |= procwalk.FieldStatus | procwalk.FieldOwner | procwalk.FieldSwap
	}
	snap := procwalk.NewSnapshot(host, fields, sel.Fields, procs, v)
	snap.Time, snap.Source, snap.SourceNote = start, Name, note
	snap.Duration = time.Since(start)
	return snap, nil
}

// rssPartialNote says, for the source note, that n processes' RSS is
// their counters' shared part alone: the iterator could not read the
// per-CPU parts that statm adds (a NULL counters pointer, a failed read),
// so it may be off by up to the counter's batch on each CPU.
func rssPartialNote(n int) string {
	what := "1 process"
	if n != 1 {
		what = fmt.Sprintf("%d processes", n)
	}
	return fmt.Sprintf("; RSS of %s lacks its per-CPU parts (the shared count alone, may be off by a few pages a CPU)", what)
}

// iterate reads the iterator and decodes its records, into room for
// about expect processes.
func (s *Source) iterate(expect int) ([]procwalk.Process, error) {
	r, err := s.iter.open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return s.decode(r, expect)
}

// chunkBytes is the buffer the records are read into and decoded from,
// chunk by chunk: a few times what one read(2) of the iterator's seq_file
// returns, far less than the whole output (240 bytes a process).
const chunkBytes = 128 << 10

// alignedBytes returns n bytes (rounded up to 8) backed by uint64s: the
// records are read in place as Go structs holding uint64s.
func alignedBytes(n int) []byte {
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)
}

// decode reads the records from r and turns them into Processes, in the
// iterator's order (ascending pid), adding each thread's counters to its
// process. A record cut by the end of a read is completed by the next.
// expect, the processes /proc lists, sizes a new Process array.
func (s *Source) decode(r io.Reader, expect int) ([]procwalk.Process, error) {
	procs := s.spare[:0]
	s.spare = nil
	if cap(procs) < expect {
		// Room for a few more, as the Scanner: a doubling append would
		// hold two arrays at once, a peak of resident memory.
		procs = make([]procwalk.Process, 0, expect+expect/16)
	}
	s.totals = s.totals[:0]
	if cap(s.totals) < expect {
		// Room for as many as procs: a doubling append would leave the
		// arrays it outgrew as garbage at the first gather's peak.
		s.totals = make([]totals, 0, cap(procs))
	}
	s.threads = s.threads[:0]
	s.rssPartial = 0
	if len(s.raw) < chunkBytes {
		s.raw = alignedBytes(chunkBytes)
	}
	b := s.raw
	held := 0
	for {
		m, err := r.Read(b[held:])
		held += m
		used := 0
		if procs, used, err = s.decodeRecords(b[:held], procs, err); err != nil && err != io.EOF {
			return nil, err
		}
		// The rest of a cut record moves to the front, 8-byte aligned as
		// every record's size is a multiple of 8.
		held = copy(b, b[used:held])
		if err == io.EOF || m == 0 {
			if held > 0 {
				return nil, fmt.Errorf("BPF task iterator: %d stray bytes at the end", held)
			}
			break
		}
	}
	// The iterator walks pids in ascending order; sort if a wrapped pid
	// space ever says otherwise, totals alongside.
	if !slices.IsSortedFunc(procs, func(a, b procwalk.Process) int { return a.ID.PID - b.ID.PID }) {
		sortTogether(procs, s.totals)
	}
	for i := range s.threads {
		t := &s.threads[i]
		j, ok := slices.BinarySearchFunc(procs, int(t.Tgid), func(p procwalk.Process, pid int) int { return p.ID.PID - pid })
		if !ok {
			continue // its leader was reaped between the two records
		}
		tt := &s.totals[j]
		tt.utime += t.Utime
		tt.stime += t.Stime
		tt.rtime += t.Rtime
		tt.minFlt += t.MinFlt
		tt.majFlt += t.MajFlt
		if tt.ioOK {
			addIO(&procs[j].IO, ioOf(&t.IoCounters))
		}
	}
	for i := range procs {
		t := &s.totals[i]
		s.conv.cpu(&procs[i], t.utime, t.stime, t.rtime, t.prevU, t.prevS)
	}
	return procs, nil
}

// decodeRecords decodes the whole records at the start of b, appending
// processes to procs and threads to s.threads, and returns how many bytes
// it used. readErr, the error of the read that filled b, is passed through
// unless a record is bad.
func (s *Source) decodeRecords(b []byte, procs []procwalk.Process, readErr error) ([]procwalk.Process, int, error) {
	off := 0
	for len(b)-off >= 4 {
		switch kind := *(*uint32)(unsafe.Pointer(&b[off])); kind {
		case recProcess:
			if len(b)-off < processRecSize {
				return procs, off, readErr
			}
			r := (*taskProcessRec)(unsafe.Pointer(&b[off]))
			off += processRecSize
			if r.Pid == 0 {
				continue // not in our pid namespace (being reaped)
			}
			procs = append(procs, procwalk.Process{})
			p := &procs[len(procs)-1]
			s.conv.process(r, p)
			if r.RssPartial != 0 {
				s.rssPartial++
			}
			s.totals = append(s.totals, totals{pid: int(r.Pid), utime: r.Utime, stime: r.Stime, rtime: r.Rtime,
				prevU: r.PrevUtime, prevS: r.PrevStime, minFlt: r.MinFlt, majFlt: r.MajFlt, cgroupID: r.CgroupId,
				ioOK: r.Io != 0})
			if r.Io != 0 {
				p.IO = ioOf(&r.IoCounters) // FieldIO's, unmarked until readOptional
			}
		case recThread:
			if len(b)-off < threadRecSize {
				return procs, off, readErr
			}
			s.threads = append(s.threads, *(*taskThreadRec)(unsafe.Pointer(&b[off])))
			off += threadRecSize
		default:
			return procs, off, fmt.Errorf("BPF task iterator: unknown record kind %d", kind)
		}
	}
	return procs, off, readErr
}

// sortTogether sorts procs by pid and t in the same order.
func sortTogether(procs []procwalk.Process, t []totals) {
	idx := make([]int, len(procs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return procs[a].ID.PID - procs[b].ID.PID })
	p2, t2 := make([]procwalk.Process, len(procs)), make([]totals, len(t))
	for i, j := range idx {
		p2[i], t2[i] = procs[j], t[j]
	}
	copy(procs, p2)
	copy(t, t2)
}

// readOptional reads from /proc what the iterator does not give: fields,
// and what sel selects. With hidden set (hidepid on, s.listed read), a
// process /proc did not list and still does not show, though it runs, is
// one hidepid hides from this user: its files cannot be opened, so what it
// needs is marked denied, not silently left unread as if it had exited.
func (s *Source) readOptional(procs []procwalk.Process, fields procwalk.Fields, sel procwalk.Selector, hidden bool) {
	clear(s.groups)
	j := 0 // cursor in s.listed, sorted as procs are
	for i := range procs {
		p := &procs[i]
		want := fields
		if sel.Select != nil {
			want |= sel.Select(p)
		}
		if i < len(s.totals) && s.totals[i].ioOK {
			if want&procwalk.FieldIO != 0 {
				p.Read |= procwalk.FieldIO // decode summed what /proc/<pid>/io sums
			} else {
				p.IO = procwalk.IO{} // not asked for: the snapshot holds none
			}
		}
		if want &^= p.Read; want == 0 {
			continue
		}
		if hidden {
			for j < len(s.listed) && s.listed[j] < p.ID.PID {
				j++
			}
			if (j == len(s.listed) || s.listed[j] != p.ID.PID) && s.hiddenFromProc(p.ID.PID) {
				p.Denied |= want
				continue
			}
		}
		s.groups[want] = append(s.groups[want], p)
	}
	for f, ps := range s.groups {
		// Only a root that cannot be opened fails; Host was just read
		// from it.
		_ = s.scanner.ReadMore(ps, f)
	}
	clear(s.groups) // its pointers would keep this snapshot's array alive
}

// hiddenFromProc reports whether pid runs but /proc does not show it: not
// a process started after the listing (/proc shows it now), nor one that
// has exited since the iterator saw it (its reads count it gone).
func (s *Source) hiddenFromProc(pid int) bool {
	if _, err := os.Stat(s.fs.Path(strconv.Itoa(pid))); err == nil {
		return false
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// ReadMore reads fields f of processes of an earlier snapshot from /proc.
func (s *Source) ReadMore(procs []*procwalk.Process, f procwalk.Fields) error {
	return s.scanner.ReadMore(procs, f)
}

// Recycle takes back a snapshot's storage for the next gather.
func (s *Source) Recycle(snap *procwalk.Snapshot) {
	if snap == nil || snap.Source != Name {
		s.scanner.Recycle(snap) // a fallback scan's
		return
	}
	if cap(snap.Procs) > cap(s.spare) {
		clear(snap.Procs[:cap(snap.Procs)])
		s.spare = snap.Procs[:0]
		snap.Procs = nil
	}
}

// ReleaseSpare returns the pages of recycled storage and of the record
// buffer (about 240 bytes a process) to the kernel, keeping both arrays:
// the next gather overwrites them, and the kernel maps zeroed pages again
// as it touches them.
func (s *Source) ReleaseSpare() {
	procwalk.ReleasePages(s.spare)
	s.scanner.ReleaseSpare()
	b := s.raw[:cap(s.raw)]
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if skip := int((page - start%page) % page); skip < len(b) {
		b = b[skip:]
		if b = b[:len(b)-len(b)%int(page)]; len(b) > 0 {
			unix.Madvise(b, unix.MADV_DONTNEED) // advice: nothing to do if refused
		}
	}
}

// boottimeOffset is the boottime offset of the reader's time namespace
// (time_namespaces(7)), in ns: /proc adds it to every start time. 0 when
// the file is absent (no CONFIG_TIME_NS) or says none.
func boottimeOffset(fs procwalk.FS) uint64 {
	b, err := os.ReadFile(fs.Path("self", "timens_offsets"))
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(b) {
		f := bytes.Fields(line)
		if len(f) == 3 && string(f[0]) == "boottime" {
			sec, err1 := strconv.ParseInt(string(f[1]), 10, 64)
			nsec, err2 := strconv.ParseInt(string(f[2]), 10, 64)
			if err1 == nil && err2 == nil {
				return uint64(sec*int64(time.Second) + nsec)
			}
		}
	}
	return 0
}

// identityUIDs reports whether the reader's user namespace maps uids
// one to one (the initial namespace): then the kernel's uids are the ones
// /proc/<pid>/status shows, and the iterator fills FieldStatus. Elsewhere
// status is read from /proc as the Scanner does.
func identityUIDs(fs procwalk.FS) bool {
	b, err := os.ReadFile(fs.Path("self", "uid_map"))
	if err != nil {
		return false
	}
	f := bytes.Fields(b)
	return len(f) == 3 && string(f[0]) == "0" && string(f[1]) == "0" && string(f[2]) == "4294967295"
}

// listPids sets s.listed to the pids /proc lists, sorted: one getdents(2)
// per few hundred pids, no file opened.
func (s *Source) listPids() error {
	root, err := unix.Open(s.fs.Root(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(root)
	if s.dents == nil {
		s.dents = make([]byte, 32<<10)
	}
	s.listed = s.listed[:0]
	err = fsio.EachDirent(root, s.dents, func(name []byte, _ byte) {
		if pid, ok := fsio.PIDName(name); ok {
			s.listed = append(s.listed, pid)
		}
	})
	if err != nil {
		return err
	}
	if !slices.IsSorted(s.listed) {
		slices.Sort(s.listed)
	}
	return nil
}

// findHidden sets s.hidden to the pids of s.listed that procs (sorted by
// pid) lacks.
func (s *Source) findHidden(procs []procwalk.Process) {
	s.hidden = s.hidden[:0]
	i := 0
	for _, pid := range s.listed {
		for i < len(procs) && procs[i].ID.PID < pid {
			i++
		}
		if i == len(procs) || procs[i].ID.PID != pid {
			s.hidden = append(s.hidden, pid)
		}
	}
}

// possibleCPUs is the number of CPU ids in /sys/devices/system/cpu/possible
// ("0-63" or "0,2-5"): one past the highest, as per-CPU data is indexed.
func possibleCPUs() (uint32, error) {
	const path = "/sys/devices/system/cpu/possible"
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("reading the possible CPUs: %w", err)
	}
	var n uint32
	for _, r := range strings.Split(strings.TrimSpace(string(b)), ",") {
		_, hi, _ := strings.Cut(r, "-")
		if hi == "" {
			hi = r
		}
		v, err := strconv.ParseUint(hi, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("%s: %q is not a CPU list", path, b)
		}
		n = max(n, uint32(v)+1)
	}
	return n, nil
}
