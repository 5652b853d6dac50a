//go:build linux

package ruletest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/recording"
	"github.com/procwalk/procwalk/procwalk/session"
	"github.com/procwalk/procwalk/scripting"
)

// run.go runs a rule over a test's frames, as watch (or run) would have on
// a host showing them, and compares what it did with what the test
// expects, time by time.

// Files are the rule test files paths name: a file as it is, a folder
// its *.ruletest files in name order. A path that does not exist, or a
// folder without a test, is an error.
func Files(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		found, err := filepath.Glob(filepath.Join(p, "*.ruletest"))
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no *.ruletest file in this folder", p)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// Options are what a test run needs from its caller.
type Options struct {
	// Bundled returns the source of a bundled script by name (false: no
	// such script); nil: only files.
	Bundled func(name string) ([]byte, bool)
	// Limits of the script's runs; zero: scripting's defaults.
	Limits scripting.Limits
	// Protected names no kill may touch, as --protect adds them; nil:
	// procwalk's default list.
	Protected []string
}

// Result is the outcome of one test file.
type Result struct {
	Path string
	// Frames the rule ran on; Checked the expectations held.
	Frames, Checked int
	// Diff says, per time, what was expected and not got ("-") and what
	// was got and not expected ("+"); empty when the test passed.
	Diff string
	// Errors are the runs that failed, by time (a failing run is no pass).
	Errors []string
}

// Pass reports whether every expectation held and every run succeeded.
func (r *Result) Pass() bool { return r.Diff == "" && len(r.Errors) == 0 }

// RunFile reads and runs the test at path.
func RunFile(ctx context.Context, path string, opt Options) (*Result, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := Parse(path, src)
	if err != nil {
		return nil, err
	}
	return Run(ctx, t, opt)
}

// got is what a rule did at one time.
type got struct {
	alerts, kills, emits []item
	prints, logs         []string
	err                  error
}

// item is an alert, kill or emitted metric as the keys an expectation
// names: tags and fields, and for an emit its measurement.
type item struct {
	what, measurement string
	keys              map[string]string
}

// Run runs t.
func Run(ctx context.Context, t *Test, opt Options) (*Result, error) {
	script, err := load(t, opt)
	if err != nil {
		return nil, err
	}
	frames, users, err := inputFrames(t)
	if err != nil {
		return nil, err
	}
	if len(frames) == 0 {
		return nil, fmt.Errorf("%w: %s: the recording has no frame", ErrSyntax, t.Path)
	}
	offsets := frameTimes(frames)
	times := make(map[time.Duration]bool, len(frames))
	for _, at := range offsets {
		times[at] = true
	}
	for _, e := range t.Expect {
		if !times[e.At] {
			return nil, fmt.Errorf("%w: %s:%d: expect %s: no frame at %s", ErrSyntax, t.Path, e.Line, fmtTime(e.At), fmtTime(e.At))
		}
	}

	var cur *got
	var snap *procwalk.Snapshot
	var printed strings.Builder
	kc := kill.Config{Requester: "rule:" + script.Name, Protected: opt.Protected, Audit: func(ev kill.ActionEvent) {
		cur.kills = append(cur.kills, actionItem(ev))
	}}
	cfg := scripting.Config{
		Killer:   scripting.ReplayKiller{Base: kc, Snapshot: func() *procwalk.Snapshot { return snap }},
		Emitter:  emitter{to: func(it item) { cur.add(it) }},
		Logger:   slog.New(&logHandler{to: func(s string) { cur.logs = append(cur.logs, s) }}),
		Print:    &printed,
		DryRun:   true,
		Mode:     t.Mode,
		Args:     t.Args,
		Users:    users,
		Hostname: "testhost",
		Now:      func() time.Time { return snap.Time },
		Limits:   opt.Limits,
	}
	rt := scripting.New(cfg)
	defer func() { rt.Close() }()
	byTime := make(map[time.Duration]*got, len(frames))
	var order []time.Duration
	for i, f := range frames {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		at := offsets[i]
		cur, snap = &got{}, f.Snapshot
		byTime[at], order = cur, append(order, at)
		if t.Mode == "run" && i > 0 {
			rt.Close()
			rt = scripting.New(cfg)
		}
		printed.Reset()
		sessions := f.Sessions
		cur.err = rt.Run(ctx, script, scripting.Input{Snapshot: f.Snapshot, Sessions: func() ([]session.Session, error) { return sessions, nil }})
		cur.prints = strings.Split(strings.TrimSuffix(printed.String(), "\n"), "\n")
	}
	return compare(t, order, byTime, len(frames)), nil
}

// frameTimes are the frames' times from the first, as a test names them:
// a recording's gathers come a few microseconds off their tick (1.000077s),
// so they are rounded to the second, or the millisecond when frames come
// faster, as long as no two frames fall on one time.
func frameTimes(frames []frame.Frame) []time.Duration {
	first := frames[0].Snapshot.Time
	for _, unit := range []time.Duration{time.Second, time.Millisecond, 0} {
		out := make([]time.Duration, len(frames))
		seen := make(map[time.Duration]bool, len(frames))
		for i, f := range frames {
			at := f.Snapshot.Time.Sub(first)
			if unit > 0 {
				at = at.Round(unit)
			}
			if seen[at] && unit > 0 {
				out = nil
				break
			}
			out[i], seen[at] = at, true
		}
		if out != nil {
			return out
		}
	}
	return nil // unreachable: the last unit takes every time
}

// load compiles the rule: a file (a name with a slash or ending in .lua,
// relative to the test's folder), else a bundled script.
func load(t *Test, opt Options) (*scripting.Script, error) {
	name := t.Rule
	if !strings.Contains(name, "/") && !strings.HasSuffix(name, ".lua") && opt.Bundled != nil {
		if src, ok := opt.Bundled(name); ok {
			return scripting.Compile(strings.TrimSuffix(name, ".lua")+".lua", src)
		}
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(t.Path), name)
	}
	s, err := scripting.LoadFile(path)
	if errors.Is(err, scripting.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s: rule %s: no bundled script of that name and no file %s", ErrSyntax, t.Path, name, path)
	}
	return s, err
}

// inputFrames returns the frames of t: its recording's, or those its
// lines describe; and the user names of the recording or its user lines.
func inputFrames(t *Test) ([]frame.Frame, *procwalk.Users, error) {
	if t.Replay == "" {
		names := make(map[int]string, len(t.Users))
		for name, uid := range t.Users {
			names[uid] = name
		}
		frames, err := buildFrames(t)
		return frames, procwalk.NewUsers(names), err
	}
	path := t.Replay
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(t.Path), path)
	}
	r, err := recording.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: replay: %w", t.Path, err)
	}
	defer r.Close()
	var frames []frame.Frame
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: replay: %w", t.Path, err)
		}
		frames = append(frames, f)
	}
	return frames, r.Header().UserNames(), nil
}

// add files an emitted metric: procwalk_alert is an alert.
func (g *got) add(it item) {
	if it.measurement == "procwalk_alert" {
		it.what = "alert"
		g.alerts = append(g.alerts, it)
		return
	}
	g.emits = append(g.emits, it)
}

type emitter struct{ to func(item) }

func (e emitter) Emit(measurement string, tags map[string]string, fields map[string]any, _ time.Time) error {
	it := item{what: "emit", measurement: measurement, keys: make(map[string]string, len(tags)+len(fields))}
	for k, v := range tags {
		it.keys[k] = v
	}
	for k, v := range fields {
		it.keys[k] = value(v)
	}
	e.to(it)
	return nil
}

// value is a field as an expectation writes it: a number in Go's shortest
// form, true or false, a string as it is.
func value(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case uint64:
		return strconv.FormatUint(x, 10)
	case bool:
		return strconv.FormatBool(x)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// actionItem is a kill's outcome as the keys of procwalk_action.
func actionItem(ev kill.ActionEvent) item {
	keys := map[string]string{"pid": strconv.Itoa(ev.PID), "comm": ev.Comm, "outcome": ev.Outcome, "scope": ev.Scope,
		"signals": strings.Join(ev.Signals, ","), "dry_run": strconv.FormatBool(ev.DryRun), "requester": ev.Requester}
	if ev.Session != "" {
		keys["session"] = ev.Session
	}
	if ev.Args != "" {
		keys["cmdline"] = ev.Args
	}
	if ev.Reason != "" {
		keys["reason"] = ev.Reason
	}
	keys["rss_bytes"] = strconv.FormatUint(ev.RSSBytes, 10)
	return item{what: "kill", keys: keys}
}

// logHandler keeps each log record's message and attributes as one line.
type logHandler struct {
	to    func(string)
	attrs []slog.Attr
}

func (h *logHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%s", a.Key, a.Value)
		return true
	})
	h.to(b.String())
	return nil
}
func (h *logHandler) WithAttrs(a []slog.Attr) slog.Handler {
	return &logHandler{to: h.to, attrs: append(slices.Clone(h.attrs), a...)}
}
func (h *logHandler) WithGroup(string) slog.Handler { return h }

// matches reports whether it has every key of e with its value.
func matches(e Expectation, it item) bool {
	if e.What != it.what || (e.What == "emit" && e.Measurement != it.measurement) {
		return false
	}
	for _, kv := range e.Keys {
		v, ok := it.keys[kv.key]
		if !ok {
			return false
		}
		if kv.regexp {
			re, err := regexp.Compile(kv.value)
			if err != nil || !re.MatchString(v) {
				return false
			}
			continue
		}
		if v == kv.value {
			continue
		}
		// Numbers as numbers, to the float noise of a sum or a ratio
		// (524288000.00000006 is 500 MiB).
		a, err1 := strconv.ParseFloat(v, 64)
		b, err2 := strconv.ParseFloat(kv.value, 64)
		if err1 != nil || err2 != nil || math.Abs(a-b) > 1e-9*max(math.Abs(a), math.Abs(b)) {
			return false
		}
	}
	return true
}

// compare checks the expectations time by time. Alerts and kills are
// checked at every frame: one not expected is a difference. Emitted
// metrics are checked at the times an expectation names their
// measurement; printed and logged lines only for the texts named.
func compare(t *Test, order []time.Duration, byTime map[time.Duration]*got, frames int) *Result {
	res := &Result{Path: t.Path, Frames: frames}
	type timed struct {
		at          time.Duration
		measurement string
	}
	measured := map[timed]bool{}
	for _, e := range t.Expect {
		if e.What == "emit" {
			measured[timed{e.At, e.Measurement}] = true
		}
	}
	var diff strings.Builder
	for _, at := range order {
		g := byTime[at]
		if g.err != nil {
			res.Errors = append(res.Errors, fmt.Sprintf("at %s: %v", fmtTime(at), g.err))
		}
		var lines []string
		var unmatched []item
		for _, list := range [][]item{g.alerts, g.kills, g.emits} {
			for _, it := range list {
				if it.what == "emit" && !measured[timed{at, it.measurement}] {
					continue
				}
				unmatched = append(unmatched, it)
			}
		}
		for _, e := range t.Expect {
			if e.At != at {
				continue
			}
			switch e.What {
			case "print", "log":
				texts := g.prints
				if e.What == "log" {
					texts = g.logs
				}
				if slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, e.Text) }) {
					res.Checked++
					continue
				}
				lines = append(lines, fmt.Sprintf("    - %s %s (line %d)", e.What, quote(e.Text), e.Line))
				for i, s := range texts {
					if i == maxShown {
						lines = append(lines, fmt.Sprintf("      (%d more lines)", len(texts)-i))
						break
					}
					lines = append(lines, fmt.Sprintf("      %s: %s", map[string]string{"print": "printed", "log": "logged"}[e.What], procwalk.Printable(s)))
				}
				continue
			}
			i := slices.IndexFunc(unmatched, func(it item) bool { return matches(e, it) })
			if i < 0 {
				lines = append(lines, fmt.Sprintf("    - %s (line %d)", describeExpect(e), e.Line))
				continue
			}
			res.Checked++
			unmatched = slices.Delete(unmatched, i, i+1)
		}
		for _, it := range unmatched {
			lines = append(lines, "    + "+describe(it))
		}
		if len(lines) > 0 {
			fmt.Fprintf(&diff, "  at %s:\n%s\n", fmtTime(at), strings.Join(lines, "\n"))
		}
	}
	res.Diff = diff.String()
	return res
}

// maxShown bounds the printed or logged lines a missing text shows.
const maxShown = 20

// describeExpect writes an expectation as its line has it.
func describeExpect(e Expectation) string {
	var b strings.Builder
	b.WriteString(e.What)
	if e.Measurement != "" {
		b.WriteString(" " + e.Measurement)
	}
	for _, kv := range e.Keys {
		op := "="
		if kv.regexp {
			op = "~"
		}
		b.WriteString(" " + kv.key + op + quote(kv.value))
	}
	return b.String()
}

// describe writes what a rule did as an expectation line would name it:
// the keys people look at first, then the others by name; the rule's own
// name (requester, rule) is left out.
func describe(it item) string {
	var b strings.Builder
	b.WriteString(it.what)
	if it.what == "emit" {
		b.WriteString(" " + it.measurement)
	}
	first := []string{"message", "severity", "kind", "session", "pid", "comm", "outcome", "signals"}
	rank := func(k string) int {
		if i := slices.Index(first, k); i >= 0 {
			return i
		}
		return len(first)
	}
	keys := make([]string, 0, len(it.keys))
	for k := range it.keys {
		if k != "requester" && k != "rule" {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if ri, rj := rank(keys[i]), rank(keys[j]); ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		b.WriteString(" " + k + "=" + quote(it.keys[k]))
	}
	return b.String()
}

// quote quotes a value with spaces, quotes or unprintable characters, as
// a test file would write it.
func quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\"#\\") && procwalk.Printable(s) == s {
		return s
	}
	return strconv.Quote(s)
}
