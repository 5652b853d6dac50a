//go:build linux

package scripting

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"
	"github.com/procwalk/procwalk/scripting/internal/_luavm/parse"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// maxSourceBytes bounds a script's source, and with it the time and memory
// compiling may take: deep nesting is refused before the parser runs
// (precheck.go), what is left costs about a second per MiB on a loaded
// machine.
// The biggest bundled script is 5 KiB.
const maxSourceBytes = 256 << 10

// Script is a compiled Lua chunk. It is immutable and may be shared by
// Runtimes on different goroutines; compile once, run many times.
type Script struct {
	// Name is what errors and logs call the script: "memory-guard.lua".
	Name  string
	proto *lua.FunctionProto
}

// Compile parses and compiles src. name is used in error positions.
func Compile(name string, src []byte) (*Script, error) {
	if len(src) > maxSourceBytes {
		return nil, fmt.Errorf("%w: %s: %s of source is over the %s limit", ErrCompile, name, formatBytes(float64(len(src))), formatBytes(maxSourceBytes))
	}
	if err := checkSyntaxDepth(name, src); err != nil {
		return nil, err
	}
	chunk, err := parse.Parse(bytes.NewReader(src), name)
	var perr *parse.Error
	switch {
	case errors.As(err, &perr):
		near := ""
		if perr.Token != "" {
			near = fmt.Sprintf(" near '%s'", perr.Token)
		}
		if perr.Pos.Line == parse.EOF {
			return nil, fmt.Errorf("%w: %s: at end of file: %s", ErrCompile, name, perr.Message)
		}
		return nil, fmt.Errorf("%w: %s:%d: %s%s", ErrCompile, name, perr.Pos.Line, perr.Message, near)
	case err != nil:
		return nil, fmt.Errorf("%w: %s: %v", ErrCompile, name, err)
	case chunk == nil && len(bytes.TrimSpace(src)) > 0:
		return nil, fmt.Errorf("%w: %s: the parser gave up", ErrCompile, name)
	}
	if err := checkChunk(name, chunk); err != nil {
		return nil, err
	}
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		var cerr *lua.CompileError
		if errors.As(err, &cerr) {
			return nil, fmt.Errorf("%w: %s:%d: %s", ErrCompile, name, cerr.Line, cerr.Message)
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrCompile, name, err)
	}
	// The main chunk is vararg and, in gopher-lua's Lua 5.0 compatibility
	// mode, builds an "arg" table on every call that nothing can reach (the
	// main chunk has no "arg" local): skip it, it was most of a run's cost.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	return &Script{Name: name, proto: proto}, nil
}

// LoadFile reads and compiles the script at path.
func LoadFile(path string) (*Script, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, maxSourceBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading script %s: %w", path, err)
	}
	return Compile(filepath.Base(path), src)
}

// Config is what a Runtime needs from its host. The zero value runs scripts
// that can read processes but not act: no kills, emits refused, print and
// logs discarded.
type Config struct {
	// Killer carries out procwalk.kill and the :kill methods; nil makes
	// every kill return nil, "killing is not available here".
	Killer Killer
	// Emitter receives procwalk.emit lines and procwalk_alert lines; nil
	// makes emit return nil, "no output stream".
	Emitter Emitter
	// Logger receives procwalk.log and procwalk.alert records; nil discards.
	Logger *slog.Logger
	// Print receives print(...); nil discards. Never the line-protocol
	// stream.
	Print io.Writer
	// DryRun turns every kill into a dry run, whatever the script asks.
	DryRun bool
	// Mode is procwalk.mode, for scripts that act differently once or per
	// tick: "run", "watch" or "telegraf"; "" means "run".
	Mode string
	// Args are the script's arguments: procwalk.args and the chunk's "...".
	Args []string
	// Users names the uids of process.user and the user filter; nil shows
	// uids in decimal.
	Users *procwalk.Users
	// Hostname is procwalk.hostname(); "" means os.Hostname().
	Hostname string
	// Now is the clock of procwalk.now() and of the hourly kill budget;
	// nil means time.Now.
	Now    func() time.Time
	Limits Limits
	// KillBudget bounds the processes kills may signal over the runs; nil
	// means an hourly ledger of Limits.KillsPerHour on Now. A worker's is
	// its parent's allowance (WorkerConn).
	KillBudget KillBudget
	// DeadlineMoved is told when a kill moves the run's deadline (later
	// while it may wait for its targets, back by what it did not wait),
	// so that a worker's parent moves its own; nil: nobody to tell.
	DeadlineMoved func(by time.Duration)
}

// Input is what one run looks at.
type Input struct {
	Snapshot *procwalk.Snapshot
	// Sessions groups the snapshot into sessions. It is called at most once
	// per run, the first time the script asks for sessions; nil means the
	// script sees no sessions.
	Sessions func() ([]session.Session, error)
	// ReadMore reads optional fields of the snapshot's processes that its
	// scan did not read (procwalk.Monitor.ReadMore): a field a script asks
	// of a process is read then, once, so every mode sees every field
	// while a scan reads only what rates and sessions need. nil: fields
	// the scan did not read are nil.
	ReadMore func(procs []*procwalk.Process, f procwalk.Fields) error
}

// Runtime runs compiled scripts in one sandboxed Lua state, so that
// procwalk.state and debounce counters carry over from one run to the next
// (watch mode). A run that hits a limit (timeout, memory, stack) discards
// the state: the next run starts afresh. A Runtime is not safe for
// concurrent use; use one per goroutine.
type Runtime struct {
	cfg    Config
	limits Limits
	mod    *module
	L      *lua.LState
	// handler is traceback as a Lua function of L, made once per state.
	handler *lua.LFunction

	coroutines int // created in the current run
	// limitMsg is the message of the last sandbox limit the run hit; the
	// run's error is a limit error only if it carries it (a script may
	// catch a limit error with pcall and fail later for its own reasons).
	limitMsg string
	// heap and cancel are the current run's watchdog and cancel function.
	heap   *heapWatch
	cancel context.CancelCauseFunc
	// retainedBase is the live heap when the state was built.
	retainedBase uint64
	// errorText is set while an error object's __tostring runs: a .. in
	// it is bounded by MaxStringBytes, the error message's limit.
	errorText bool
	// printed, emitted and emittedBytes are the current run's output
	// (output.go).
	printed, emitted, emittedBytes int
	// nested counts the coroutines resumed inside each other now (nest).
	nested int
}

// New returns a Runtime; the Lua state is built on the first run.
func New(cfg Config) *Runtime {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Print == nil {
		cfg.Print = io.Discard
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Mode == "" {
		cfg.Mode = "run"
	}
	if cfg.Hostname == "" {
		cfg.Hostname, _ = os.Hostname()
	}
	r := &Runtime{cfg: cfg, limits: cfg.Limits.withDefaults()}
	if r.cfg.KillBudget == nil {
		r.cfg.KillBudget = NewKillLedger(r.limits.KillsPerHour, cfg.Now)
	}
	r.mod = newModule(r)
	return r
}

// Close releases the Lua state.
func (r *Runtime) Close() {
	if r.L != nil {
		r.L.Close()
		r.L = nil
	}
	// What pointed into the state goes with it: a dropped state kept alive
	// by the module would count in the next state's retained base, which
	// could then keep as much again.
	r.handler = nil
	r.mod.forgetState()
}

// Run runs s once against in. It returns nil, or an error wrapping
// ErrScript, ErrTimeout, ErrMemory or ErrLimit whose message starts with
// the script's file:line. The host is never harmed by what the script does.
func (r *Runtime) Run(ctx context.Context, s *Script, in Input) error {
	if in.Snapshot == nil {
		return errors.New("scripting: Run needs a snapshot")
	}
	r.cfg.Users.Refresh() // a user added or renamed since the last run (procwalk.Users)
	if r.L == nil {
		if r.keepsState() {
			r.retainedBase = liveHeap()
		}
		r.L = r.newState(r.cfg.Print)
		r.handler = r.L.NewFunction(r.traceback)
	}
	L := r.L
	r.coroutines, r.limitMsg = 0, ""
	r.printed, r.emitted, r.emittedBytes, r.nested = 0, 0, 0, 0
	r.mod.begin(ctx, s, in)
	defer r.mod.end()

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.mod.deadline = newDeadline(r.limits.Timeout, cancel, r.cfg.DeadlineMoved)
	defer r.mod.deadline.stop()
	r.mod.killsLeft = min(r.limits.KillsPerRun, r.cfg.KillBudget.Left())
	r.mod.graceLeft = r.limits.GraceBudget
	r.heap, r.cancel = watchHeap(cancel, r.limits.HeapBudgetBytes), cancel
	L.SetContext(runCtx)

	args := make([]lua.LValue, len(r.cfg.Args))
	for i, a := range r.cfg.Args {
		args[i] = lua.LString(a)
	}
	escaped, err := r.call(L, L.NewFunctionFromProto(s.proto), args)
	r.heap.stop()
	r.heap, r.cancel = nil, nil
	cause := context.Cause(runCtx)
	cancel(nil)
	if !escaped { // after an escaped panic the state is dropped as it is
		L.RemoveContext()
		L.SetTop(0)
	}
	if err != nil {
		err = r.runError(s, err, cause, ctx)
		if escaped || !errors.Is(err, ErrScript) {
			// A limit can leave huge tables or half-run coroutines behind:
			// start the next run from a fresh state.
			r.Close()
			return err
		}
	}
	if r.keepsState() {
		if kept := retained(r.retainedBase, r.limits.RetainedBytes); kept > 0 {
			r.Close()
			return errors.Join(err, fmt.Errorf("%w: %s: %w", ErrMemory, s.Name, errRetained{keptBytes: kept, budgetBytes: r.limits.RetainedBytes}))
		}
	}
	return err
}

// keepsState reports whether the Lua state lasts from run to run, so that
// what it keeps is bounded by Limits.RetainedBytes.
func (r *Runtime) keepsState() bool { return r.cfg.Mode != "run" }

// call runs fn in protected mode with the traceback handler. gopher-lua's
// protected call pushes the handler onto the value stack; when the error was
// a full stack ("registry overflow") that push raises again and the panic
// escapes its recovery, as do some Go panics inside the VM (an index out of
// range [-1] after a vararg tail call). It is caught here, at the script's
// line if the VM's stack still tells it: the state is then unusable, and
// Run discards it as after any limit.
func (r *Runtime) call(L *lua.LState, fn *lua.LFunction, args []lua.LValue) (escaped bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			if aerr, ok := v.(*lua.ApiError); ok { // a Lua error: a full stack
				r.limitMsg = aerr.Object.String()
				escaped, err = true, errors.New(r.limitMsg)
				return
			}
			r.limitMsg = fmt.Sprint(v)
			escaped, err = true, errGoPanic{where: luaPosition(L), msg: r.limitMsg}
		}
	}()
	return false, L.CallByParam(lua.P{Fn: fn, NRet: 0, Protect: true, Handler: r.handler}, args...)
}

// runError turns a Lua error into one of our sentinels.
func (r *Runtime) runError(s *Script, err error, cause error, parent context.Context) error {
	msg := err.Error()
	var aerr *lua.ApiError
	if errors.As(err, &aerr) {
		msg = aerr.Object.String()
	}
	where := luaWhere(msg, s.Name)
	first, _, _ := strings.Cut(msg, "\n")
	var gp errGoPanic
	if errors.As(cause, &gp) || errors.As(err, &gp) {
		return fmt.Errorf("%w: %s %v", ErrLimit, cmp.Or(gp.where, where), gp)
	}
	if panicMsg, ok := isGoPanic(err); ok {
		// Recovered by the run's own protected call, the traceback after
		// it: the position is the traceback's.
		return fmt.Errorf("%w: %s %v\n%s", ErrLimit, where, errGoPanic{msg: panicMsg}, strings.TrimPrefix(msg, first+"\n"))
	}
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("%s interrupted: %w", where, context.Cause(parent))
	case errors.Is(cause, errRunTimeout):
		return fmt.Errorf("%w: %s ran past its %s deadline", ErrTimeout, where, r.limits.Timeout)
	case errors.Is(cause, ErrMemory):
		return fmt.Errorf("%w: %s %v", ErrMemory, where, cause)
	case errors.Is(cause, ErrLimit):
		return fmt.Errorf("%w: %s %v", ErrLimit, where, cause)
	case r.limitMsg != "" && strings.Contains(msg, r.limitMsg),
		strings.HasSuffix(first, "stack overflow") || strings.HasSuffix(first, "registry overflow"):
		return fmt.Errorf("%w: %s", ErrLimit, msg)
	}
	return fmt.Errorf("%w: %s", ErrScript, msg)
}

// luaWhere returns the "file:line:" a Lua error message starts with, or
// the first traceback line naming the script, or the script name.
func luaWhere(msg, name string) string {
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, name+":") {
			continue
		}
		rest := line[len(name)+1:]
		if i := strings.IndexByte(rest, ':'); i > 0 && strings.Trim(rest[:i], "0123456789") == "" {
			return name + ":" + rest[:i] + ":"
		}
	}
	return name + ":"
}

// limitError raises a Lua error for a sandbox limit and remembers it.
func (r *Runtime) limitError(L *lua.LState, format string, args ...any) {
	r.limitMsg = fmt.Sprintf(format, args...)
	L.RaiseError("%s", r.limitMsg)
}

// maxErrorText is how much of an error message a run's error keeps: it
// and the traceback after it fit in the 4 KiB of a stderr line
// (procwalk.MaxLogLineBytes), which cuts anything longer.
const maxErrorText = 2 << 10

// maxTraceback bounds the frames a traceback lists, maxTracebackLevels the
// levels it looks at.
const (
	maxTraceback       = 10
	maxTracebackLevels = 1000
)

// traceback is the message handler of every run: it appends the Lua frames
// of the error's stack, innermost first, so that an error raised deep in a
// helper still names the script's lines that led there.
func (r *Runtime) traceback(L *lua.LState) int {
	msg := L.Get(1)
	var b strings.Builder
	// An error message may be of any size: keep its start, so that it and
	// the traceback fit in one stderr line.
	text := r.errorMessage(L, msg)
	if len(text) > maxErrorText {
		cut := maxErrorText
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = fmt.Sprintf("%s... (error message of %s cut at %s)", text[:cut], formatBytes(float64(len(text))), formatBytes(maxErrorText))
	}
	b.WriteString(text)
	n := 0
	// Levels count tail calls, which are numberless in a loop of them; only
	// frames are worth looking at, so the walk stops after maxTracebackLevels.
	for level := 1; n < maxTraceback && level < maxTracebackLevels; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sln", dbg, lua.LNil); err != nil || dbg.What == "G" || dbg.CurrentLine <= 0 {
			continue
		}
		if n == 0 {
			b.WriteString("\nstack traceback:")
		}
		fmt.Fprintf(&b, "\n\t%s:%d:", dbg.Source, dbg.CurrentLine)
		if dbg.Name != "" && dbg.What != "main" {
			fmt.Fprintf(&b, " in function '%s'", dbg.Name)
		} else if dbg.What == "main" {
			b.WriteString(" in main chunk")
		}
		n++
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// errorMessage returns the text of an error object: a string as it is;
// else what its __tostring returns, called in protected mode with every ..
// in it bounded by the error message's limit before it allocates (one that
// returned 100 MiB made a 100 MiB stderr line).
func (r *Runtime) errorMessage(L *lua.LState, msg lua.LValue) string {
	fn := L.GetMetaField(msg, "__tostring")
	if _, ok := msg.(lua.LString); ok || fn == lua.LNil {
		return L.ToStringMeta(msg).String()
	}
	r.errorText = true
	defer func() { r.errorText = false }()
	L.Push(fn)
	L.Push(msg)
	if err := L.PCall(1, 1, nil); err != nil {
		text := err.Error()
		var aerr *lua.ApiError
		if errors.As(err, &aerr) {
			text = aerr.Object.String() // without gopher-lua's Go stack trace
		}
		if len(text) > maxErrorInError {
			text = text[:maxErrorInError] + "..."
		}
		return "(an error object whose __tostring failed: " + text + ")"
	}
	v := L.Get(-1)
	L.Pop(1)
	return v.String()
}

// maxErrorInError bounds the error of a failed __tostring that an error
// message quotes.
const maxErrorInError = 1 << 10

// errRunTimeout is the cancel cause of a run past its deadline.
var errRunTimeout = errors.New("deadline exceeded")

// deadline cancels a run when its time is up. A kill moves it later by
// the time the kill may wait for its targets, then back by what it did not
// wait (see module.kill): only the waiting is not counted.
type deadline struct {
	end    time.Time
	timer  *time.Timer
	cancel context.CancelCauseFunc
	moved  func(by time.Duration) // nil: nobody to tell
}

func newDeadline(d time.Duration, cancel context.CancelCauseFunc, moved func(time.Duration)) *deadline {
	dl := &deadline{end: time.Now().Add(d), cancel: cancel, moved: moved}
	dl.timer = time.AfterFunc(d, func() { dl.cancel(errRunTimeout) })
	return dl
}

// move moves the deadline by, later or earlier. A deadline that has
// passed already cancelled the run: moving it changes nothing then.
func (d *deadline) move(by time.Duration) {
	if by == 0 {
		return
	}
	d.end = d.end.Add(by)
	if d.timer.Stop() {
		d.timer.Reset(max(time.Until(d.end), 0))
	}
	if d.moved != nil {
		d.moved(by)
	}
}

func (d *deadline) stop() { d.timer.Stop() }
