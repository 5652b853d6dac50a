//go:build linux

package procwalk_test

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// integration_test.go checks the engine against other tools on the live
// /proc, using only processes the test starts itself. It runs when
// PROCWALK_INTEGRATION=1 (set by .ci/run) and needs ps, python3, tmux and
// smem (apt-get install -y tmux smem).

func integration(t *testing.T, tools ...string) {
	t.Helper()
	if os.Getenv("PROCWALK_INTEGRATION") != "1" {
		t.Skip("integration test: set PROCWALK_INTEGRATION=1 to run it")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed by this integration test: install it (apt-get install -y %s) or unset PROCWALK_INTEGRATION", tool, tool)
		}
	}
}

func liveSnapshot(t *testing.T, fields procwalk.Fields) *procwalk.Snapshot {
	t.Helper()
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	s, err := fs.Snapshot(fields)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startGroup starts a command in its own process group and kills the whole
// group when the test ends: the group holds only what this test started.
func startGroup(t *testing.T, name string, args ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() {
		// Only while the leader is unreaped: its pid, the group's id, cannot be
		// reused then; after a Wait another test's new group may hold it.
		if cmd.ProcessState == nil {
			syscall.Kill(-pgid, syscall.SIGKILL)
			cmd.Wait()
		}
	})
	return cmd, bufio.NewReader(out)
}

// holderScript maps a shared file (faulting in every page), allocates and
// touches private MiB, then says it is ready by creating a file and sleeps:
// an idle process with known shared and private memory.
const holderScript = `import mmap, sys, time
f = open(sys.argv[1], "r+b")
m = mmap.mmap(f.fileno(), 0)
touched = sum(m[i] for i in range(0, len(m), 4096))
b = bytearray(int(sys.argv[2]) << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
open(sys.argv[3], "w").close()
time.sleep(10**6)
`

// holderDir writes the holder script and a shared file of sharedMiB.
func holderDir(t *testing.T, sharedMiB int) (dir, script, shared string) {
	t.Helper()
	dir = t.TempDir()
	script, shared = filepath.Join(dir, "holder.py"), filepath.Join(dir, "shared")
	if err := os.WriteFile(script, []byte(holderScript), 0o644); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, sharedMiB<<20)
	for i := range data {
		data[i] = byte(i*7 + i>>12) // non-zero, so no page is special
	}
	if err := os.WriteFile(shared, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, script, shared
}

// waitFiles waits until every path exists.
func waitFiles(t *testing.T, paths []string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for _, p := range paths {
		for {
			if _, err := os.Stat(p); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s: the process that should create it did not start", p)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// psRSS returns ps's RSS, in bytes, of pids.
func psRSS(t *testing.T, pids []int) map[int]uint64 {
	t.Helper()
	list := make([]string, len(pids))
	for i, pid := range pids {
		list[i] = strconv.Itoa(pid)
	}
	out, err := exec.Command("ps", "-o", "pid=,rss=", "-p", strings.Join(list, ",")).Output()
	if err != nil {
		t.Fatalf("ps: %v", err)
	}
	rss := make(map[int]uint64)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("ps printed %q, want \"pid rss\"", line)
		}
		pid, err1 := strconv.Atoi(f[0])
		kib, err2 := strconv.ParseUint(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("ps printed %q, want two numbers", line)
		}
		rss[pid] = kib << 10 // ps prints KiB
	}
	return rss
}

// between reports whether got lies within tol of the range of a and b: two
// readings by another tool taken just before and just after ours. A value
// that moved meanwhile (a page faulted in or reclaimed, a library mapped by
// one more process on a busy host) then still brackets ours.
func between(got, a, b, tol uint64) bool {
	lo, hi := min(a, b), max(a, b)
	return got+tol >= lo && got <= hi+tol
}

// TestIntegrationRSSMatchesPs compares each process's RSS with ps for idle
// processes this test started: sleeps and a holder with 32 MiB private.
func TestIntegrationRSSMatchesPs(t *testing.T) {
	integration(t, "ps", "python3", "sleep")
	dir, script, shared := holderDir(t, 1)
	var pids []int
	for range 3 {
		cmd, _ := startGroup(t, "sleep", "100000")
		pids = append(pids, cmd.Process.Pid)
	}
	ready := filepath.Join(dir, "ready")
	holder, _ := startGroup(t, "python3", script, shared, "32", ready)
	pids = append(pids, holder.Process.Pid)
	waitFiles(t, []string{ready})

	before := psRSS(t, pids)
	s := liveSnapshot(t, 0)
	after := psRSS(t, pids)
	for _, pid := range pids {
		p := s.Process(pid)
		if p == nil {
			t.Fatalf("pid %d (started by the test) is missing from the snapshot", pid)
		}
		// Idle processes: both read the same kernel counter. Allow a few
		// pages for per-CPU counter drift.
		if tol := uint64(4 * os.Getpagesize()); !between(p.RSSBytes, before[pid], after[pid], tol) {
			t.Errorf("pid %d (%s): RSS %d bytes, ps says %d before and %d after (tolerance %d)",
				pid, p.Comm, p.RSSBytes, before[pid], after[pid], tol)
		}
	}
	if h := s.Process(holder.Process.Pid); h != nil && h.RSSBytes < 32<<20 {
		t.Errorf("holder touched 32 MiB but its RSS is %d bytes", h.RSSBytes)
	}
	for _, pid := range pids[:3] {
		if p := s.Process(pid); p != nil && p.Comm != "sleep" {
			t.Errorf("pid %d: comm %q, want sleep", pid, p.Comm)
		}
	}
}

// TestIntegrationSubtreeTotals starts sh → {3 sleeps, sh → sleep}, with the
// shells printing the pids they start, and checks Subtree against sums over
// exactly those pids.
func TestIntegrationSubtreeTotals(t *testing.T) {
	integration(t, "sh", "sleep", "ps")
	const script = `for i in 1 2 3; do sleep 100000 & echo $!; done
sh -c 'sleep 100000 & echo $!; wait' & echo $!
wait`
	root, out := startGroup(t, "sh", "-c", script)
	want := map[int]bool{root.Process.Pid: true}
	for range 5 {
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the pids the shell started: %v", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(line))
		if err != nil {
			t.Fatalf("shell printed %q, want a pid", line)
		}
		want[pid] = true
	}
	pids := make([]int, 0, len(want))
	for pid := range want {
		pids = append(pids, pid)
	}

	// The inner sh prints its sleep's pid once the sleep is forked, but a
	// child may not have exec'd yet: wait until every one is a sleep.
	var s *procwalk.Snapshot
	var psSumBefore uint64
	deadline := time.Now().Add(60 * time.Second)
	for {
		psSumBefore = sumRSS(psRSS(t, pids))
		s = liveSnapshot(t, procwalk.FieldSmaps)
		sleeps := 0
		for pid := range want {
			if p := s.Process(pid); p != nil && p.Comm == "sleep" {
				sleeps++
			}
		}
		if sleeps == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of 4 sleeps are running after 60s", sleeps)
		}
		time.Sleep(20 * time.Millisecond)
	}

	var sum procwalk.Totals
	for pid := range want {
		p := s.Process(pid)
		if p == nil {
			t.Fatalf("pid %d (started by the test) is missing from the snapshot", pid)
		}
		sum.Add(p)
	}
	got := s.Subtree(root.Process.Pid)
	if got.Procs != len(want) || got.RSSBytes != sum.RSSBytes || got.PSSBytes != sum.PSSBytes ||
		got.USSBytes != sum.USSBytes || got.Threads != sum.Threads {
		t.Errorf("Subtree(%d) = %d procs, %d threads, RSS %d, PSS %d, USS %d; the started pids sum to %d procs, %d threads, RSS %d, PSS %d, USS %d",
			root.Process.Pid, got.Procs, got.Threads, got.RSSBytes, got.PSSBytes, got.USSBytes,
			sum.Procs, sum.Threads, sum.RSSBytes, sum.PSSBytes, sum.USSBytes)
	}
	if got.SmapsRead != len(want) {
		t.Errorf("Subtree read smaps of %d processes, want all %d (as their owner)", got.SmapsRead, len(want))
	}
	desc := s.Descendants(root.Process.Pid)
	if len(desc) != len(want)-1 {
		t.Errorf("Descendants(%d) has %d processes, want %d", root.Process.Pid, len(desc), len(want)-1)
	}
	for _, p := range desc {
		if !want[p.ID.PID] {
			t.Errorf("Descendants(%d) holds pid %d (%s), which the test did not start", root.Process.Pid, p.ID.PID, p.Comm)
		}
	}
	// And the sum itself against ps, an independent reader, read once more
	// now: with the reading taken before the snapshot, it brackets ours.
	psSumAfter := sumRSS(psRSS(t, pids))
	if tol := uint64(4 * len(want) * os.Getpagesize()); !between(got.RSSBytes, psSumBefore, psSumAfter, tol) {
		t.Errorf("subtree RSS %d bytes, ps sums to %d before and %d after (tolerance %d)", got.RSSBytes, psSumBefore, psSumAfter, tol)
	}
}

func sumRSS(rss map[int]uint64) uint64 {
	var sum uint64
	for _, v := range rss {
		sum += v
	}
	return sum
}

// smemUsage runs smem for processes whose cmdline matches pattern and
// returns PSS and USS in bytes by pid.
func smemUsage(t *testing.T, pattern string) map[int][2]uint64 {
	t.Helper()
	out, err := exec.Command("smem", "-H", "-c", "pid pss uss", "-P", pattern).Output()
	if err != nil {
		t.Fatalf("smem: %v", err)
	}
	usage := make(map[int][2]uint64)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("smem printed %q, want \"pid pss uss\"", line)
		}
		pid, err1 := strconv.Atoi(f[0])
		pss, err2 := strconv.ParseUint(f[1], 10, 64)
		uss, err3 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("smem printed %q, want three numbers", line)
		}
		usage[pid] = [2]uint64{pss << 10, uss << 10} // smem prints KiB without -k
	}
	return usage
}

// TestIntegrationPSSUSSMatchSmem runs a small tmux load on its own server
// (shells, sleeps and python holders sharing one mapped file) and compares
// procwalk's smaps_rollup figures with smem's sums over smaps.
func TestIntegrationPSSUSSMatchSmem(t *testing.T) {
	integration(t, "tmux", "smem", "python3", "sleep")
	const sessions = 3
	dir, script, shared := holderDir(t, 8)
	// A socket of our own in dir, removed with it: no server or stale
	// socket of anyone else's is touched.
	socket := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) ([]byte, error) {
		cmd := exec.Command("tmux", append([]string{"-S", socket}, args...)...)
		cmd.Env = append(os.Environ(), "TMUX=") // allowed even when run inside tmux
		return cmd.CombinedOutput()
	}
	t.Cleanup(func() { tmux("kill-server") })
	var ready []string
	for i := range sessions {
		a, b := filepath.Join(dir, fmt.Sprintf("ready-%d-a", i)), filepath.Join(dir, fmt.Sprintf("ready-%d-b", i))
		ready = append(ready, a, b)
		pane := fmt.Sprintf("sleep 100000 & sleep 100000 & python3 %s %s 4 %s & python3 %s %s 0 %s & wait",
			script, shared, a, script, shared, b)
		if out, err := tmux("new-session", "-d", "-s", fmt.Sprintf("it-%d", i), "-x", "80", "-y", "24", "sh -c '"+pane+"'"); err != nil {
			t.Fatalf("tmux new-session: %v: %s", err, out)
		}
	}
	waitFiles(t, ready)
	out, err := tmux("display-message", "-p", "#{pid}")
	if err != nil {
		t.Fatalf("tmux display-message: %v: %s", err, out)
	}
	server, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("tmux printed server pid %q", out)
	}

	// A shell's PSS moves whenever any process on the host maps or unmaps
	// libc (another test package forking shells, say): a round whose
	// numbers moved past the tolerance between smem's readings and ours is
	// taken again, up to 5 rounds; all of them disagreeing fails.
	var mismatches []string
	var holders, compared int
	var worstPSS, worstUSS float64
	for round := 1; round <= 5; round++ {
		mismatches, holders, compared, worstPSS, worstUSS = compareWithSmem(t, dir, server)
		if len(mismatches) == 0 {
			break
		}
		t.Logf("round %d: %d disagreement(s) with smem, first: %s", round, len(mismatches), mismatches[0])
	}
	for _, m := range mismatches {
		t.Error(m)
	}
	t.Logf("compared %d processes (%d holders) with smem: worst difference PSS %.2f%%, USS %.2f%%", compared, holders, worstPSS*100, worstUSS*100)
	if holders != 2*sessions || compared < 3*sessions {
		t.Errorf("compared %d processes (%d holders) with smem, want %d shells and %d holders", compared, holders, sessions, 2*sessions)
	}
}

// TestIntegrationChurn forks and reaps short-lived processes from several
// goroutines while snapshotting everything in a loop with a Sampler.
func TestIntegrationChurn(t *testing.T) {
	integration(t, "true")
	truePath, _ := exec.LookPath("true")
	// Churn until every minimum is reached: time, snapshots (a scan of a
	// big host under -race takes seconds), forks, and a process seen to
	// vanish mid-scan. Counts, not a fork rate: on a loaded machine the
	// rate is whatever the scheduler gives. maxDuration bounds it all.
	const (
		workers      = 4
		minDuration  = 3 * time.Second
		minSnapshots = 5
		minForks     = 500
		maxDuration  = 2 * time.Minute
	)
	ctx, cancel := context.WithTimeout(context.Background(), maxDuration)
	defer cancel()
	var forks atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if err := exec.Command(truePath).Run(); err == nil {
					forks.Add(1)
				}
			}
		}()
	}
	defer func() { cancel(); wg.Wait() }() // every child is reaped before the test returns

	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	sc := procwalk.NewScanner(fs)
	var sampler procwalk.Sampler
	prev := map[int]procwalk.ProcID{}
	var snapshots, gone, measured, reused int
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	start := time.Now()
	for time.Since(start) < minDuration || snapshots < minSnapshots || forks.Load() < minForks || gone == 0 {
		if ctx.Err() != nil {
			t.Fatalf("in %v: %d snapshots (want %d), %d forks (want %d), %d processes gone mid-scan (want some)",
				maxDuration, snapshots, minSnapshots, forks.Load(), minForks, gone)
		}
		s, err := sc.Snapshot(procwalk.AllFields | procwalk.FieldSmaps)
		if err != nil {
			t.Fatalf("snapshot %d: %v", snapshots, err)
		}
		sampler.Observe(s)
		snapshots++
		gone += s.Visibility.Gone
		if s.Visibility.Malformed > 0 {
			for i := range s.Procs {
				if p := &s.Procs[i]; p.Malformed != 0 {
					t.Errorf("snapshot %d: pid %d (%s): malformed %v", snapshots, p.ID.PID, p.Comm, p.Malformed)
				}
			}
			t.Errorf("snapshot %d: %d malformed processes", snapshots, s.Visibility.Malformed)
		}
		next := make(map[int]procwalk.ProcID, len(s.Procs))
		for i := range s.Procs {
			p := &s.Procs[i]
			next[p.ID.PID] = p.ID
			old, seen := prev[p.ID.PID]
			if seen && old != p.ID {
				reused++
			}
			r := p.Rates
			if !r.Measured {
				continue
			}
			measured++
			if !seen || old != p.ID {
				t.Errorf("pid %d (%s) got a rate but the previous snapshot had %v, not %v", p.ID.PID, p.Comm, old, p.ID)
			}
			if r.CPUPercent < 0 || r.ReadBytesPerSecond < 0 || r.WriteBytesPerSecond < 0 || r.IntervalSeconds <= 0 ||
				!finite(r.CPUPercent) || !finite(r.ReadBytesPerSecond) || !finite(r.WriteBytesPerSecond) ||
				!finite(r.RSSGrowthBytesPerMinute) || !finite(r.PSSGrowthBytesPerMinute) || !finite(r.USSGrowthBytesPerMinute) {
				t.Errorf("pid %d (%s): bad rates %+v", p.ID.PID, p.Comm, r)
			}
		}
		prev = next
	}
	cancel()
	wg.Wait()
	perSecond := float64(forks.Load()) / time.Since(start).Seconds()
	t.Logf("%d snapshots, %d processes forked and reaped (%.0f/s), %d gone mid-scan, %d rates, %d pid reuses seen",
		snapshots, forks.Load(), perSecond, gone, measured, reused)
	if measured == 0 {
		t.Errorf("%d snapshots gave no measured rate: the Sampler never matched a process", snapshots)
	}
}

// compareWithSmem reads smem, a snapshot with smaps and smem again, and
// compares PSS and USS of every descendant of server that smem lists (whose
// command line names dir). It returns what disagreed, how many processes and
// python holders it compared, and the worst differences as fractions.
func compareWithSmem(t *testing.T, dir string, server int) (mismatches []string, holders, compared int, worstPSS, worstUSS float64) {
	t.Helper()
	before := smemUsage(t, regexp.QuoteMeta(dir))
	s := liveSnapshot(t, procwalk.FieldSmaps)
	after := smemUsage(t, regexp.QuoteMeta(dir))
	for _, p := range s.Descendants(server) {
		b, okBefore := before[p.ID.PID]
		a, okAfter := after[p.ID.PID]
		if !okBefore || !okAfter {
			continue // a sleep: its cmdline does not name dir
		}
		if p.Read&procwalk.FieldSmaps == 0 {
			t.Errorf("pid %d (%s): smaps not read (denied %v, malformed %v)", p.ID.PID, p.Comm, p.Denied, p.Malformed)
			continue
		}
		compared++
		// smem sums each mapping's line of smaps, truncated to whole KiB;
		// smaps_rollup truncates once. So a few KiB apart on a small
		// process, more on one with many mappings: 2% or 4 pages.
		// A PSS also moves when any other process on the host maps or
		// unmaps a shared library: smem reads before and after ours.
		for _, c := range []struct {
			name               string
			got, before, after uint64
		}{{"PSS", p.Smaps.PSSBytes, b[0], a[0]}, {"USS", p.Smaps.USSBytes, b[1], a[1]}} {
			tol := max(max(c.before, c.after)/50, uint64(4*os.Getpagesize()))
			if !between(c.got, c.before, c.after, tol) {
				mismatches = append(mismatches, fmt.Sprintf("pid %d (%s): %s %d bytes, smem says %d before and %d after (tolerance %d)",
					p.ID.PID, p.Comm, c.name, c.got, c.before, c.after, tol))
			}
			// The difference from the nearer of smem's two readings.
			d := min(math.Abs(float64(c.got)-float64(c.before)), math.Abs(float64(c.got)-float64(c.after))) / float64(max(c.before, 1))
			if c.name == "PSS" {
				worstPSS = max(worstPSS, d)
			} else {
				worstUSS = max(worstUSS, d)
			}
		}
		if strings.HasPrefix(p.Comm, "python") {
			holders++
			// Six holders share the 8 MiB file: PSS counts a sixth of it,
			// RSS all of it.
			if p.Smaps.PSSBytes >= p.RSSBytes {
				t.Errorf("holder %d: PSS %d not below RSS %d although it shares 8 MiB with 5 others", p.ID.PID, p.Smaps.PSSBytes, p.RSSBytes)
			}
		}
	}
	return mismatches, holders, compared, worstPSS, worstUSS
}
