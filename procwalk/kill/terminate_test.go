//go:build linux

package kill

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

// These tests run the Killer over the fixture tree testdata/kill/proc with a
// fake kernel: no real process is signalled. The fixture:
//
//	1 systemd ─┬─ 50 sshd
//	           ├─ 60 tmux: server ─┬─ 61 bash ── 70 procwalk (self)
//	           │                   └─ 80 bash ─┬─ 81 make ─┬─ 82 cc1 (pgrp 81, 360 MB)
//	           │                                │           ├─ 84 sleep (pgrp 81)
//	           │                                │           └─ 85 cc1 (zombie)
//	           │                                └─ 83 python3 /usr/bin/jupyter-lab
//	           └─ 90 containerd-shim
//	2 kthreadd ── 3 kworker/0:1

const killFixture = "testdata/kill/proc"

// fakeProc is one process of the fake kernel.
type fakeProc struct {
	ignores   map[syscall.Signal]bool // signals it survives (KILL is never survivable)
	exited    bool
	signals   []syscall.Signal
	signalErr error
	stuck     bool                 // survives even SIGKILL (uninterruptible sleep)
	onSignal  func(syscall.Signal) // runs after a signal is delivered, without the lock
}

// fakeKernel stands in for pidfd_open and friends.
type fakeKernel struct {
	mu      sync.Mutex
	procs   map[int]*fakeProc
	openErr map[int]error
	opened  []int
}

func newFakeKernel() *fakeKernel {
	return &fakeKernel{procs: make(map[int]*fakeProc), openErr: make(map[int]error)}
}

func (f *fakeKernel) proc(pid int) *fakeProc {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.procs[pid]
	if p == nil {
		p = &fakeProc{ignores: map[syscall.Signal]bool{}}
		f.procs[pid] = p
	}
	return p
}

func (f *fakeKernel) open(id procwalk.ProcID) (handle, error) {
	f.mu.Lock()
	f.opened = append(f.opened, id.PID)
	err := f.openErr[id.PID]
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return &fakeHandle{k: f, p: f.proc(id.PID)}, nil
}

type fakeHandle struct {
	k *fakeKernel
	p *fakeProc
}

func (h *fakeHandle) Signal(sig syscall.Signal) error {
	h.k.mu.Lock()
	if h.p.signalErr != nil {
		h.k.mu.Unlock()
		return h.p.signalErr
	}
	if h.p.exited {
		h.k.mu.Unlock()
		return fmt.Errorf("fake: %w", procwalk.ErrGone)
	}
	h.p.signals = append(h.p.signals, sig)
	if !h.p.stuck && (sig == syscall.SIGKILL || sig != syscall.SIGSTOP && sig != syscall.SIGCONT && !h.p.ignores[sig]) {
		h.p.exited = true
	}
	onSignal := h.p.onSignal
	h.k.mu.Unlock()
	if onSignal != nil {
		onSignal(sig)
	}
	return nil
}

func (h *fakeHandle) Wait(ctx context.Context, d time.Duration) bool {
	h.k.mu.Lock()
	exited := h.p.exited
	h.k.mu.Unlock()
	if !exited && d > 0 {
		time.Sleep(min(d, 5*time.Millisecond))
	}
	return exited
}

// Stopped: a fake process stops the moment SIGSTOP is sent.
func (h *fakeHandle) Stopped() bool        { return true }
func (h *fakeHandle) ReleaseMemory() error { return nil }
func (h *fakeHandle) Close() error         { return nil }

func newTestKiller(t *testing.T, cfg Config) (*Killer, *fakeKernel, *[]ActionEvent) {
	t.Helper()
	fs, err := procwalk.NewFS(killFixture)
	if err != nil {
		t.Fatal(err)
	}
	cfg.SelfPID = 70
	if cfg.Grace == 0 {
		cfg.Grace = 60 * time.Millisecond
	}
	if cfg.KillWait == 0 {
		cfg.KillWait = 60 * time.Millisecond
	}
	cfg.Rescan = 10 * time.Millisecond
	var events []ActionEvent
	cfg.Audit = func(e ActionEvent) { events = append(events, e) }
	k, err := NewKiller(fs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	fk := newFakeKernel()
	k.open = fk.open
	k.keep = func() (keeper, error) { return &fakeKeeper{}, nil }
	k.tmux = func(context.Context, ...string) error { t.Error("tmux must not run"); return nil }
	return k, fk, &events
}

// fakeKeeper holds whatever it is given, as a live sentinel would.
type fakeKeeper struct {
	procs_, cgroups int
	released        bool
}

func (f *fakeKeeper) procs(hs []handle) error { f.procs_ += len(hs); return nil }
func (f *fakeKeeper) cgroup(string) error     { f.cgroups++; return nil }
func (f *fakeKeeper) release(bool) error      { f.released = true; return nil }

// fixtureID returns the ProcID of pid in the fixture.
func killFixtureID(t *testing.T, pid int) procwalk.ProcID {
	t.Helper()
	fs, _ := procwalk.NewFS(killFixture)
	snap, err := fs.Snapshot(0)
	if err != nil {
		t.Fatal(err)
	}
	p := snap.Process(pid)
	if p == nil {
		t.Fatalf("fixture has no pid %d", pid)
	}
	return p.ID
}

func targetPIDs(ts []Target) []int {
	var out []int
	for _, t := range ts {
		out = append(out, t.ID.PID)
	}
	return out
}

func skippedResults(p *Plan) map[int]Result {
	out := make(map[int]Result)
	for _, o := range p.Skipped {
		out[o.ID.PID] = o.Result
	}
	return out
}

func TestPlanProtection(t *testing.T) {
	tests := []struct {
		name        string
		pid         int
		force       bool
		wantTarget  bool
		wantHard    bool
		wantPattern string
	}{
		{"pid 1", 1, true, false, true, ""},
		{"kthreadd", 2, true, false, true, ""},
		{"kernel worker", 3, true, false, true, ""},
		{"self", 70, true, false, true, ""},
		{"parent shell", 61, true, false, true, ""},
		{"tmux server is an ancestor", 60, true, false, true, ""},
		{"sshd", 50, false, false, false, "sshd"},
		{"sshd forced", 50, true, true, false, ""},
		{"jupyter-lab via its interpreter", 83, false, false, false, "jupyter-lab"},
		{"shim by comm glob", 90, false, false, false, "containerd-shim*"},
		{"plain compiler", 82, false, true, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, _, _ := newTestKiller(t, Config{Force: tt.force})
			plan, err := k.Plan(ProcessScope{ID: killFixtureID(t, tt.pid)})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(plan.Targets) == 1; got != tt.wantTarget {
				t.Fatalf("targeted = %v, want %v (skipped %v)", got, tt.wantTarget, plan.Skipped)
			}
			if tt.wantTarget {
				return
			}
			if len(plan.Skipped) != 1 {
				t.Fatalf("skipped = %v, want one refusal", plan.Skipped)
			}
			err = plan.Skipped[0].Err
			var pe *ProtectedError
			if !errors.As(err, &pe) || !errors.Is(err, ErrProtected) {
				t.Fatalf("err = %v, want a ProtectedError", err)
			}
			if pe.Hard != tt.wantHard {
				t.Errorf("Hard = %v, want %v (%v)", pe.Hard, tt.wantHard, err)
			}
			if tt.wantPattern != "" && !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.wantPattern)) {
				t.Errorf("err = %v, want it to name %q", err, tt.wantPattern)
			}
		})
	}
}

func TestPlanTreeKeepsHardRulesUnderForce(t *testing.T) {
	k, _, _ := newTestKiller(t, Config{Force: true})
	// The tmux server and the shell above procwalk are its ancestors, and
	// procwalk is itself: refused even with Force. The server's refusal
	// shields its whole tree, which holds procwalk's own session.
	for _, root := range []int{60, 1} {
		plan, err := k.Plan(TreeScope{Root: killFixtureID(t, root)})
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Targets) != 0 {
			t.Errorf("tree %d: targets = %v, want none", root, targetPIDs(plan.Targets))
		}
		for _, o := range plan.Skipped {
			var pe *ProtectedError
			if !errors.As(o.Err, &pe) || !pe.Hard {
				t.Errorf("tree %d: pid %d: %v, want a hard refusal", root, o.ID.PID, o.Err)
			}
		}
		if root == 1 && len(plan.Skipped) != 11 { // all below init but the zombie
			t.Errorf("tree 1: %d skipped, want 11", len(plan.Skipped))
		}
	}
}

// A protected process shields what runs below it in a tree: the tree of
// the tmux server is cut at the server, and --force lifts the cut with the
// protected list (procwalk is not in that tree here).
func TestPlanTreeCutAtProtected(t *testing.T) {
	for _, force := range []bool{false, true} {
		k, _, _ := newTestKiller(t, Config{Force: force})
		k.cfg.SelfPID = 50 // outside the tree of 60
		plan, err := k.Plan(TreeScope{Root: killFixtureID(t, 60)})
		if err != nil {
			t.Fatal(err)
		}
		if force {
			if got, want := targetPIDs(plan.Targets), []int{60, 61, 70, 80, 81, 82, 84, 83}; !slices.Equal(got, want) {
				t.Errorf("forced: targets = %v, want %v", got, want)
			}
			continue
		}
		if len(plan.Targets) != 0 || len(plan.Skipped) != 8 {
			t.Fatalf("targets %v skipped %d, want none and 8 refusals", targetPIDs(plan.Targets), len(plan.Skipped))
		}
		for _, o := range plan.Skipped[1:] {
			if o.ID.PID == 83 { // jupyter-lab, protected in its own right
				continue
			}
			if !strings.Contains(o.Err.Error(), "which is protected, in the tree; kill --force overrides") {
				t.Errorf("pid %d: %v, want a cut a --force lifts", o.ID.PID, o.Err)
			}
		}
	}
}

// Children forked during termination are cut the same way: a child of a
// protected member is left alone, a child of a target is signalled.
func TestExecuteTreeNewcomersUnderProtected(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(killFixture)); err != nil {
		t.Fatal(err)
	}
	k, fk, _ := newTestKiller(t, Config{Grace: 200 * time.Millisecond})
	if k.fs, _ = procwalk.NewFS(root); k.fs.Root() != root {
		t.Fatal("no FS")
	}
	fork := func(pid, ppid int, comm string) {
		dir := filepath.Join(root, strconv.Itoa(pid))
		stat := fmt.Sprintf("%d (%s) S %d 81 80 0 -1 4194560 0 0 0 0 1 1 0 0 20 0 1 0 %d 819200 100 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", pid, comm, ppid, 500+pid)
		for name, body := range map[string]string{"stat": stat, "statm": "200 100 100 10 0 100 0\n", "cmdline": comm + "\x00"} {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// make survives TERM and, handling it, forks; jupyter-lab (83) starts a
	// kernel meanwhile.
	fk.proc(81).ignores[syscall.SIGTERM] = true
	fk.proc(81).onSignal = func(sig syscall.Signal) {
		if sig == syscall.SIGTERM {
			fork(86, 81, "cc1")
			fork(87, 83, "ipykernel")
		}
	}
	r, err := k.TerminateScope(context.Background(), TreeScope{Root: killFixtureID(t, 80)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]Result{}
	for _, o := range r.Outcomes {
		got[o.ID.PID] = o.Result
	}
	want := map[int]Result{80: ResultExited, 81: ResultKilled, 82: ResultExited, 83: ResultProtected, 84: ResultExited, 86: ResultExited, 87: ResultProtected}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("results = %v, want %v", got, want)
	}
	if s := fk.proc(87).signals; len(s) != 0 {
		t.Errorf("the kernel under the protected jupyter-lab got %v", s)
	}
}

// FieldSmaps gives the targets their PSS, read for the scope's members only.
func TestPlanReadsPSSOfMembers(t *testing.T) {
	fs, err := procwalk.NewFS("../testdata/proc") // the read package's fixture
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewKiller(fs, Config{Fields: procwalk.FieldSmaps})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := k.Plan(GroupScope{PGRP: 110})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]uint64{}
	for _, tg := range plan.Targets {
		if tg.HavePSS {
			got[tg.ID.PID] = tg.PSSBytes >> 10
		}
	}
	if want := map[int]uint64{110: 5000, 111: 100000}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("PSS KiB of the targets = %v, want %v", got, want)
	}
}

func TestPlanGoneAndReusedRoot(t *testing.T) {
	k, _, _ := newTestKiller(t, Config{})
	id := killFixtureID(t, 82)
	for _, tt := range []struct {
		id   procwalk.ProcID
		want Result
		err  error
	}{
		{procwalk.ProcID{PID: 4000, StartTicks: 1}, ResultGone, procwalk.ErrGone},
		{procwalk.ProcID{PID: 82, StartTicks: id.StartTicks + 1}, ResultIdentityChanged, ErrIdentityChanged},
	} {
		plan, err := k.Plan(TreeScope{Root: tt.id})
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Targets) != 0 || len(plan.Skipped) != 1 {
			t.Fatalf("%v: targets %v skipped %v, want one skip", tt.id, plan.Targets, plan.Skipped)
		}
		if o := plan.Skipped[0]; o.Result != tt.want || !errors.Is(o.Err, tt.err) {
			t.Errorf("%v: %v %v, want %v wrapping %v", tt.id, o.Result, o.Err, tt.want, tt.err)
		}
		// The event carries the identity asked for, never the figures of
		// the process that holds the pid now.
		if o := plan.Skipped[0]; o.Target != (Target{ID: tt.id}) {
			t.Errorf("%v: target %+v, want only the identity asked for", tt.id, o.Target)
		}
	}
}

func TestPlanGroupAndCgroup(t *testing.T) {
	k, _, _ := newTestKiller(t, Config{})
	plan, err := k.Plan(GroupScope{PGRP: 81})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := targetPIDs(plan.Targets), []int{81, 82, 84}; !slices.Equal(got, want) {
		t.Errorf("pgrp 81 targets = %v, want %v", got, want)
	}
	plan, err = k.Plan(&CgroupScope{Path: "/user.slice/tmux.scope/build"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := targetPIDs(plan.Targets), []int{80, 81, 82, 84}; !slices.Equal(got, want) {
		t.Errorf("cgroup targets = %v, want %v", got, want)
	}
	if got := skippedResults(plan); got[83] != ResultProtected {
		t.Errorf("jupyter in the cgroup: %v, want refused", got)
	}
	if _, err := k.Plan(&CgroupScope{Path: "/"}); !errors.Is(err, procwalk.ErrBadTarget) {
		t.Errorf("root cgroup: err = %v, want procwalk.ErrBadTarget", err)
	}
}

func TestExecuteDryRunSignalsNothing(t *testing.T) {
	k, fk, events := newTestKiller(t, Config{DryRun: true})
	r, err := k.TerminateScope(context.Background(), GroupScope{PGRP: 81})
	if err != nil {
		t.Fatal(err)
	}
	if len(fk.opened) != 0 {
		t.Fatalf("dry run opened %v", fk.opened)
	}
	if len(r.Outcomes) != 3 || !r.DryRun { // the zombie 85 is left out
		t.Errorf("outcomes = %+v, want 3 in a dry-run report", r.Outcomes)
	}
	var would []int
	for _, e := range *events {
		if !e.DryRun || e.Outcome != "dry_run" || !slices.Equal(e.Signals, []string{"TERM", "KILL"}) {
			t.Errorf("event %+v, want a dry-run event planning TERM,KILL", e)
		}
		would = append(would, e.PID)
	}
	if !slices.Equal(would, []int{81, 82, 84}) {
		t.Errorf("would signal %v, want [81 82 84]", would)
	}
	if r.Err() != nil {
		t.Errorf("Err = %v, want nil for a clean dry run", r.Err())
	}
}

func TestExecuteTwoStages(t *testing.T) {
	k, fk, events := newTestKiller(t, Config{})
	fk.proc(82).ignores[syscall.SIGTERM] = true // cc1 ignores TERM; make and sleep obey it
	start := time.Now()
	r, err := k.TerminateScope(context.Background(), GroupScope{PGRP: 81})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]string{}
	for _, o := range r.Outcomes {
		got[o.ID.PID] = o.Result.String() + " " + strings.Join(signalNames(o.Signals), ",")
	}
	// The group is stopped before each signal and continued after it
	// (the fake dies of TERM at once, before the CONT).
	want := map[int]string{81: "exited STOP,TERM", 82: "killed STOP,TERM,CONT,STOP,KILL", 84: "exited STOP,TERM"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("outcomes = %v, want %v", got, want)
	}
	for _, o := range r.Outcomes {
		if o.ID.PID == 82 && o.KillAfter < 60*time.Millisecond {
			t.Errorf("KILL after %v, before the 60ms grace", o.KillAfter)
		}
	}
	if time.Since(start) < 60*time.Millisecond {
		t.Error("returned before the grace period ended")
	}
	if r.Err() != nil {
		t.Errorf("Err = %v", r.Err())
	}
	if len(*events) != 3 || (*events)[2].PID != 82 || (*events)[2].Outcome != "killed" || (*events)[2].RSSBytes != 90000*4096 {
		t.Errorf("events = %+v", *events)
	}
}

func TestExecuteSingleProcessSkipsFreeze(t *testing.T) {
	k, fk, _ := newTestKiller(t, Config{Signal: syscall.SIGINT})
	fk.proc(84).ignores[syscall.SIGINT] = true
	o := k.Terminate(context.Background(), killFixtureID(t, 84))
	if o.Result != ResultKilled || !slices.Equal(o.Signals, []syscall.Signal{syscall.SIGINT, syscall.SIGKILL}) {
		t.Errorf("got %v %v, want killed after INT,KILL", o.Result, signalNames(o.Signals))
	}
}

// WithSignal's copy sends its own first signal; k keeps TERM.
func TestWithSignal(t *testing.T) {
	k, fk, _ := newTestKiller(t, Config{})
	kk := k.WithSignal(syscall.SIGKILL)
	if kk.Config().Signal != syscall.SIGKILL || k.Config().Signal != syscall.SIGTERM {
		t.Fatalf("signals %v and %v; want KILL for the copy, TERM kept", kk.Config().Signal, k.Config().Signal)
	}
	o := kk.Terminate(context.Background(), killFixtureID(t, 84))
	if o.Result != ResultKilled || !slices.Equal(fk.proc(84).signals, []syscall.Signal{syscall.SIGKILL}) {
		t.Errorf("got %v %v, want one KILL", o.Result, fk.proc(84).signals)
	}
}

func TestExecuteFirstSignalKill(t *testing.T) {
	k, fk, _ := newTestKiller(t, Config{Signal: syscall.SIGKILL, Grace: time.Hour})
	start := time.Now()
	o := k.Terminate(context.Background(), killFixtureID(t, 84))
	if o.Result != ResultKilled || !slices.Equal(fk.proc(84).signals, []syscall.Signal{syscall.SIGKILL}) {
		t.Errorf("got %v %v, want one KILL", o.Result, fk.proc(84).signals)
	}
	if time.Since(start) > 10*time.Second {
		t.Error("waited for the grace although the first signal was KILL")
	}
}

func TestExecuteRefusals(t *testing.T) {
	k, fk, _ := newTestKiller(t, Config{})
	fk.openErr[81] = fmt.Errorf("verify: %w", ErrIdentityChanged)
	fk.proc(82).signalErr = fmt.Errorf("fake: %w", syscall.EPERM)
	fk.openErr[84] = fmt.Errorf("fake: %w", syscall.ESRCH)
	r, err := k.TerminateScope(context.Background(), GroupScope{PGRP: 81})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]Result{}
	for _, o := range r.Outcomes {
		got[o.ID.PID] = o.Result
	}
	want := map[int]Result{81: ResultIdentityChanged, 82: ResultDenied, 84: ResultGone}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("results = %v, want %v", got, want)
	}
	if err := r.Err(); !errors.Is(err, ErrIdentityChanged) || !strings.Contains(err.Error(), "2 of 3") {
		t.Errorf("Err = %v, want 2 of 3 wrapping ErrIdentityChanged", err)
	}
}

func TestExecuteInterrupted(t *testing.T) {
	k, fk, _ := newTestKiller(t, Config{Grace: time.Hour})
	fk.proc(84).ignores[syscall.SIGTERM] = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	o := k.Terminate(ctx, killFixtureID(t, 84))
	if o.Result != ResultInterrupted || slices.Contains(fk.proc(84).signals, syscall.SIGKILL) {
		t.Errorf("got %v after %v, want interrupted without KILL", o.Result, fk.proc(84).signals)
	}
}

// A process stuck after SIGKILL is waited for up to KillWait; when ctx ends
// first, waiting stops at once (it used to spin to the deadline).
func TestExecuteStuckAfterKill(t *testing.T) {
	k, fk, _ := newTestKiller(t, Config{Signal: syscall.SIGKILL, KillWait: 30 * time.Second})
	fk.proc(84).stuck = true
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	o := k.Terminate(ctx, killFixtureID(t, 84))
	if o.Result != ResultInterrupted || !slices.Equal(o.Signals, []syscall.Signal{syscall.SIGKILL}) {
		t.Errorf("got %v %v, want interrupted after KILL", o.Result, signalNames(o.Signals))
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v: waited for KillWait after ctx ended", took)
	}
	k, fk, _ = newTestKiller(t, Config{Signal: syscall.SIGKILL}) // KillWait 60ms
	fk.proc(84).stuck = true
	if o := k.Terminate(context.Background(), killFixtureID(t, 84)); o.Result != ResultSurvived {
		t.Errorf("got %v, want survived", o.Result)
	}
}

// growingScope hands out one more fixture process on each call, standing in
// for children forked during termination.
type growingScope struct {
	pids  []int
	calls int
	first int // pids the first call hands out (1 when 0)
}

func (s *growingScope) String() string          { return "growing" }
func (s *growingScope) Fields() procwalk.Fields { return 0 }
func (s *growingScope) Grows() bool             { return true }
func (s *growingScope) Members(snap *procwalk.Snapshot, _ map[procwalk.ProcID]bool) []*procwalk.Process {
	s.calls++
	var out []*procwalk.Process
	for _, pid := range s.pids[:min(s.calls+max(s.first, 1)-1, len(s.pids))] {
		out = append(out, snap.Process(pid))
	}
	return out
}

func TestExecuteSignalsNewcomers(t *testing.T) {
	k, fk, _ := newTestKiller(t, Config{})
	fk.proc(81).ignores[syscall.SIGTERM] = true // stays alive, so the grace loop re-walks
	// make's group (81, 82, 84; 85 is a zombie) is all targets once 84
	// joins: a group that also holds processes that are no targets is
	// not stopped (TestExecuteMixedGroupNotStopped).
	r, err := k.TerminateScope(context.Background(), &growingScope{pids: []int{81, 82, 84, 50}, first: 2})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]Result{}
	for _, o := range r.Outcomes {
		got[o.ID.PID] = o.Result
	}
	want := map[int]Result{50: ResultProtected, 81: ResultKilled, 82: ResultExited, 84: ResultExited}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("results = %v, want %v", got, want)
	}
	if s := fk.proc(84).signals; !slices.Equal(s, []syscall.Signal{syscall.SIGSTOP, syscall.SIGTERM}) {
		t.Errorf("newcomer 84 got %v, want STOP then the first signal TERM", s)
	}
	if len(fk.proc(50).signals) != 0 {
		t.Errorf("protected newcomer sshd was signalled: %v", fk.proc(50).signals)
	}
}

// A process group that holds processes that are no targets is not stopped
// when the kill could orphan it (the kernel would send SIGHUP to all of
// it), and is when a link to its session stays (see mixedGroups). In the
// fixture, make (81) leads group 81 = {81, 82 cc1, 84 sleep}; its parent,
// bash 80, is in another group of the same session.
func TestExecuteMixedGroupNotStopped(t *testing.T) {
	tests := []struct {
		name    string
		pids    []int
		stopped bool
	}{
		// make and cc1 are targets, sleep is not: make's death would
		// orphan the group while the sleep is in it.
		{"link through a target", []int{81, 82}, false},
		// cc1 and sleep are targets; make, no target, keeps the group's
		// link to bash's session whatever the kill does.
		{"link kept by a process that is no target", []int{82, 84}, true},
		// The whole group: the SIGHUP could reach targets only.
		{"targets alone", []int{81, 82, 84}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, fk, _ := newTestKiller(t, Config{})
			r, err := k.TerminateScope(context.Background(), &growingScope{pids: tt.pids, first: len(tt.pids)})
			if err != nil {
				t.Fatal(err)
			}
			for _, pid := range tt.pids {
				if got := slices.Contains(fk.proc(pid).signals, syscall.SIGSTOP); got != tt.stopped {
					t.Errorf("pid %d got %v, stopped %v, want %v", pid, fk.proc(pid).signals, got, tt.stopped)
				}
			}
			noted := slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "process group 81 was not stopped") })
			if noted == tt.stopped {
				t.Errorf("notes %q", r.Notes)
			}
		})
	}
}

// A scope whose plan has no target signals nothing, not even processes
// that join it later.
func TestExecuteNoTargetsSignalsNothing(t *testing.T) {
	k, fk, _ := newTestKiller(t, Config{})
	r, err := k.TerminateScope(context.Background(), &growingScope{pids: []int{50, 84}})
	if err != nil {
		t.Fatal(err)
	}
	if len(fk.opened) != 0 || len(r.Outcomes) != 1 || r.Outcomes[0].Result != ResultProtected {
		t.Errorf("opened %v, outcomes %+v; want only sshd refused", fk.opened, r.Outcomes)
	}
}

// A cgroup is never killed as a whole (cgroup.kill ends whatever is in it
// when it is written, unverified): it is frozen around each signal when it
// holds nothing procwalk refuses or cannot see, and each member gets its
// signals through its own pidfd; what cgroup.procs still lists after the
// end that no walk could see is reported (Report.Left, ErrLeft).
func TestCgroupFrozenNeverKilledWhole(t *testing.T) {
	mount := t.TempDir()
	const path = "/user.slice/tmux.scope/build" // 80-85 in the fixture
	dir := filepath.Join(mount, path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	write("cgroup.procs", "80\n81\n82\n83\n84\n") // 85 ends at TERM
	run := func(cfg Config, scope Scope) *Report {
		t.Helper()
		write("cgroup.kill", "")
		write("cgroup.freeze", "")
		write("cgroup.events", "populated 1\nfrozen 1\n") // the fake kernel's cgroup freezes at once
		k, fk, _ := newTestKiller(t, cfg)
		for pid := 80; pid <= 84; pid++ {
			fk.proc(pid).ignores[syscall.SIGTERM] = true // alive at the KILL stage
		}
		r, err := k.TerminateScope(context.Background(), scope)
		if err != nil {
			t.Fatal(err)
		}
		if got := read("cgroup.kill"); got != "" {
			t.Errorf("cgroup.kill written: %q", got)
		}
		return r
	}
	hasNote := func(r *Report, s string) bool {
		return slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, s) })
	}
	cg := &CgroupScope{Path: path, Mount: mount}
	if r := run(Config{Force: true, DryRun: true}, cg); read("cgroup.freeze") != "" || len(r.Notes) != 1 || !strings.HasPrefix(r.Notes[0], "would freeze "+dir) {
		t.Errorf("dry run: cgroup.freeze %q, notes %q; want a note only", read("cgroup.freeze"), r.Notes)
	}
	r := run(Config{Force: true}, cg)
	if read("cgroup.freeze") != "0" || !hasNote(r, "froze "+dir+" with cgroup.freeze for the first signal") || !hasNote(r, "froze "+dir+" with cgroup.freeze for SIGKILL") || r.Err() != nil {
		t.Errorf("every member a victim: cgroup.freeze %q, notes %q, %v; want frozen for each signal, then thawed", read("cgroup.freeze"), r.Notes, r.Err())
	}
	for _, o := range r.Outcomes {
		if want := []string{"TERM", "KILL"}; o.ID.PID != 85 && !slices.Equal(signalNames(o.Signals), want) {
			t.Errorf("pid %d got %v, want %v through its pidfd (no SIGSTOP: the cgroup was frozen)", o.ID.PID, signalNames(o.Signals), want)
		}
	}
	// jupyter-lab (83) is refused: it must not be frozen along.
	if r := run(Config{}, cg); read("cgroup.freeze") != "" || !hasNote(r, "holds pid 83") || r.Outcomes[len(r.Outcomes)-1].Result != ResultKilled {
		t.Errorf("a refused member: cgroup.freeze %q, notes %q; want members stopped one by one", read("cgroup.freeze"), r.Notes)
	}
	// Inside a pid namespace cgroup.procs lists processes outside it as 0:
	// not frozen, not signalled, and said to be left.
	write("cgroup.procs", "0\n80\n81\n82\n83\n84\n")
	r = run(Config{Force: true}, cg)
	if read("cgroup.freeze") != "" || !hasNote(r, "outside procwalk's pid namespace") || !errors.Is(r.Err(), ErrLeft) ||
		len(r.Left) != 1 || !strings.Contains(r.Left[0], "still holds 1 processes outside procwalk's pid namespace") {
		t.Errorf("a pid 0 in cgroup.procs: cgroup.freeze %q, notes %q, left %q, err %v; want no freeze and the stranger reported", read("cgroup.freeze"), r.Notes, r.Left, r.Err())
	}
}

// A cgroup session's members are the cgroup's, by the session's own
// placement: the whole unit and its child cgroups, whichever members the
// session listed.
func TestCgroupSessionScopeIsMembership(t *testing.T) {
	k, fk, _ := newTestKiller(t, Config{Force: true})
	for pid := 80; pid <= 84; pid++ {
		fk.proc(pid).ignores[syscall.SIGTERM] = true
	}
	s := &session.Session{Kind: session.KindCgroup, Name: "tmux.scope",
		Attrs:   map[string]string{session.AttrCgroup: "/user.slice/tmux.scope", session.AttrCgroupVer: "1"},
		Members: []procwalk.ProcID{killFixtureID(t, 81)}}
	r, err := k.TerminateScope(context.Background(), NewSessionScope(s, false))
	if err != nil {
		t.Fatal(err)
	}
	// The unit holds the tmux server, its shell and procwalk (60, 61, 70:
	// refused by the hard rules) and the build's shell, make, cc1, the
	// python3 --force lets through and sleep (80-84; 85 is a zombie).
	if got := slices.Sorted(slices.Values(outcomePIDs(r.Outcomes))); !slices.Equal(got, []int{60, 61, 70, 80, 81, 82, 83, 84}) {
		t.Errorf("outcomes for %v, want the unit's processes", got)
	}
	for _, o := range r.Outcomes {
		if want := o.ID.PID >= 80; o.Result.Done() != want {
			t.Errorf("pid %d (%s): %v %v", o.ID.PID, o.Comm, o.Result, o.Err)
		}
	}
	s.Attrs[session.AttrCgroupVer] = "2" // the fixture's processes are placed by the v1 name=systemd line
	r, err = k.TerminateScope(context.Background(), NewSessionScope(s, false))
	if err != nil || len(r.Outcomes) != 0 {
		t.Errorf("a v2 session of that path: %v, outcomes %v; want none", err, outcomePIDs(r.Outcomes))
	}
}

func TestSessionScopeTmuxKillSession(t *testing.T) {
	k, _, _ := newTestKiller(t, Config{})
	var ran []string
	k.tmux = func(_ context.Context, args ...string) error { ran = args; return nil }
	s := &session.Session{Kind: session.KindTmux, Name: "build", Attrs: map[string]string{session.AttrSocket: "/tmp/tmux-0/default"},
		Members: []procwalk.ProcID{killFixtureID(t, 80), killFixtureID(t, 81)}}
	r, err := k.TerminateScope(context.Background(), NewSessionScope(s, true))
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomePIDs(r.Outcomes); !slices.Equal(slices.Sorted(slices.Values(got)), []int{80, 81, 82, 83, 84}) {
		t.Errorf("outcomes for %v", got)
	}
	// jupyter-lab (83), a descendant of the pane shell, is protected: the
	// session must not be killed under it.
	if ran != nil {
		t.Errorf("tmux ran %v although a member was refused", ran)
	}
	s.Members = []procwalk.ProcID{killFixtureID(t, 84)}
	if _, err := k.TerminateScope(context.Background(), NewSessionScope(s, true)); err != nil {
		t.Fatal(err)
	}
	if want := []string{"-S", "/tmp/tmux-0/default", "kill-session", "-t", "=build"}; !slices.Equal(ran, want) {
		t.Errorf("tmux args %v, want %v", ran, want)
	}
	// A dry run says it would end the session, and does not.
	ran = nil
	k.cfg.DryRun = true
	r, err = k.TerminateScope(context.Background(), NewSessionScope(s, true))
	if err != nil {
		t.Fatal(err)
	}
	if ran != nil || len(r.Notes) != 1 || r.Notes[0] != "would run tmux kill-session -t build once every member is gone" {
		t.Errorf("dry run: tmux ran %v, notes %q", ran, r.Notes)
	}
}

func outcomePIDs(os []Outcome) []int {
	var out []int
	for _, o := range os {
		out = append(out, o.ID.PID)
	}
	return out
}

func TestBiggest(t *testing.T) {
	fs, _ := procwalk.NewFS(killFixture)
	snap, err := fs.Snapshot(0)
	if err != nil {
		t.Fatal(err)
	}
	var all []*procwalk.Process
	for i := range snap.Procs {
		all = append(all, &snap.Procs[i])
	}
	rss, _ := metric.Lookup("rss")
	got := Biggest(snap, all, 3, &rss)
	var gotPIDs []int
	for _, p := range got {
		gotPIDs = append(gotPIDs, p.ID.PID)
	}
	// 82 (90000 pages), 83 (50000), then 1 and 90 tie at 3000: the lower pid first.
	if want := []int{82, 83, 1}; !slices.Equal(gotPIDs, want) {
		t.Errorf("Biggest = %v, want %v", gotPIDs, want)
	}
	if got := Biggest(snap, all, -1, &rss); len(got) != len(all)-3 { // kthreadd, kworker, zombie
		t.Errorf("Biggest(all) = %d, want %d", len(got), len(all)-3)
	}
	session := []procwalk.ProcID{killFixtureID(t, 80), killFixtureID(t, 81), killFixtureID(t, 82), {PID: 83, StartTicks: 1}}
	in := BiggestIn(snap, session, 2, &rss)
	if len(in) != 2 || in[0].ID.PID != 82 || in[1].ID.PID != 81 {
		t.Errorf("BiggestIn = %v, want 82 then 81 (83 is a stale identity)", in)
	}
}

func TestOpenProcRefusesForeignRoot(t *testing.T) {
	fs, _ := procwalk.NewFS(killFixture)
	if _, err := OpenProc(fs, killFixtureID(t, 84)); !errors.Is(err, procwalk.ErrForeignProc) {
		t.Errorf("err = %v, want procwalk.ErrForeignProc for a fixture root", err)
	}
	if _, err := OpenProc(fs, procwalk.ProcID{PID: -1}); !errors.Is(err, procwalk.ErrBadTarget) {
		t.Errorf("pid -1: err = %v, want procwalk.ErrBadTarget", err)
	}
	if _, err := OpenProc(fs, procwalk.ProcID{PID: 0}); !errors.Is(err, procwalk.ErrBadTarget) {
		t.Errorf("pid 0: err = %v, want procwalk.ErrBadTarget", err)
	}
}

func TestExecuteInterruptedTree(t *testing.T) {
	k, fk, _ := newTestKiller(t, Config{Grace: time.Hour})
	for _, pid := range []int{81, 82, 84} {
		fk.proc(pid).ignores[syscall.SIGTERM] = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	r, err := k.TerminateScope(ctx, GroupScope{PGRP: 81})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Outcomes) != 3 {
		t.Fatalf("outcomes %+v, want 3", r.Outcomes)
	}
	for _, o := range r.Outcomes {
		if o.Result != ResultInterrupted || slices.Contains(fk.proc(o.ID.PID).signals, syscall.SIGKILL) {
			t.Errorf("pid %d: %v after %v, want interrupted without KILL", o.ID.PID, o.Result, fk.proc(o.ID.PID).signals)
		}
	}
}

// lateScope is pid 82, and pid 84 too once late is set: a member that
// joined after the last walk.
type lateScope struct{ late bool }

func (s *lateScope) String() string          { return "late" }
func (s *lateScope) Fields() procwalk.Fields { return 0 }
func (s *lateScope) Grows() bool             { return true }
func (s *lateScope) Members(snap *procwalk.Snapshot, _ map[procwalk.ProcID]bool) []*procwalk.Process {
	out := []*procwalk.Process{snap.Process(82)}
	if s.late {
		out = append(out, snap.Process(84))
	}
	return out
}

// What the last walk finds alive and never signalled is reported as
// escaped, not signalled, and fails the report.
func TestExecuteReportsEscaped(t *testing.T) {
	k, fk, _ := newTestKiller(t, Config{})
	scope := &lateScope{}
	fk.proc(82).ignores[syscall.SIGTERM] = true
	fk.proc(82).onSignal = func(sig syscall.Signal) {
		if sig == syscall.SIGKILL {
			scope.late = true
		}
	}
	r, err := k.TerminateScope(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]Result{}
	for _, o := range r.Outcomes {
		got[o.ID.PID] = o.Result
	}
	if want := map[int]Result{82: ResultKilled, 84: ResultEscaped}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("results = %v, want %v", got, want)
	}
	if s := fk.proc(84).signals; len(s) != 0 {
		t.Errorf("escaped pid 84 was signalled: %v", s)
	}
	if err := r.Err(); !errors.Is(err, ErrEscaped) || !strings.Contains(err.Error(), "pid 84 (sleep) escaped") {
		t.Errorf("Err = %v, want pid 84 escaped wrapping ErrEscaped", err)
	}
}

// A target the plan saw within one clock tick of its start must still have
// its comm at action time: another process may have taken its pid within
// that tick, with the same start ticks.
func TestExecuteRefusesYoungTargetWithAnotherComm(t *testing.T) {
	k, fk, _ := newTestKiller(t, Config{})
	id := killFixtureID(t, 84)
	for _, tt := range []struct {
		comm string
		want Result
	}{{"sleep", ResultExited}, {"sleep-old", ResultIdentityChanged}} {
		target := Target{ID: id, Comm: tt.comm, young: true}
		r := k.Execute(context.Background(), &Plan{Scope: "process", Targets: []Target{target}, scope: ProcessScope{ID: id}})
		if len(r.Outcomes) != 1 || r.Outcomes[0].Result != tt.want {
			t.Errorf("comm %q: %+v, want %v", tt.comm, r.Outcomes, tt.want)
		}
	}
	if s := fk.proc(84).signals; len(s) != 1 {
		t.Errorf("signals %v, want one TERM (to the matching target only)", s)
	}
}

// Members reparented to pid 1 (their leader was killed) link their group
// to the session for mixedGroups, but never stably: the kernel skips a
// parent that is the global init when it asks whether the group is
// orphaned, so a stopped member there brings SIGHUP to the whole group
// when another member exits. A shell that is no target keeps the link.
func TestMixedGroupsParentPID1(t *testing.T) {
	proc := func(pid, ppid, pgrp int, state byte) procwalk.Process {
		return procwalk.Process{ID: procwalk.ProcID{PID: pid, StartTicks: uint64(pid)}, PPID: ppid, PGRP: pgrp, SID: 1, State: state}
	}
	for _, tt := range []struct {
		name   string
		parent int // of the group's members
		mixed  bool
	}{
		{"children of pid 1", 1, true},
		{"children of a shell that is no target", 40, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			snap := procwalk.NewSnapshot(procwalk.Host{}, 0, 0, []procwalk.Process{
				proc(1, 0, 1, 'S'), proc(40, 1, 40, 'S'),
				proc(51, tt.parent, 51, 'S'), proc(52, tt.parent, 51, 'S'), // targets
				proc(53, tt.parent, 51, 'S'), // refused: no target
			}, procwalk.Visibility{})
			targets := []Target{targetOf(snap.Process(51)), targetOf(snap.Process(52))}
			if got := mixedGroups(snap, targets)[51]; got != tt.mixed {
				t.Errorf("group 51 mixed = %v, want %v", got, tt.mixed)
			}
		})
	}
}
