//go:build linux

package scripting

import (
	"fmt"
	"math"
	"strconv"
	"time"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// helpers.go holds the small helpers of the module: sizes, durations, the
// clock, the host name, debounce and the snapshot summary.

// formatBytes prints a byte count, signed, with a binary unit: "1.5 GiB",
// "-200.0 MiB" (growth can be negative).
func formatBytes(n float64) string {
	switch {
	case math.IsNaN(n) || math.IsInf(n, 0):
		return strconv.FormatFloat(n, 'f', -1, 64)
	case n < 0:
		return "-" + formatBytes(-n)
	case n >= math.MaxUint64:
		return procwalk.FormatBytes(math.MaxUint64)
	}
	return procwalk.FormatBytes(uint64(n))
}

// formatDuration prints seconds in at most two units, as the engine names
// agent ages ("2 hr 5 min", "3 days 4 hr"), with seconds below a minute
// ("42 s") where the engine says "< 1 min".
func formatDuration(s float64) string {
	switch {
	case math.IsNaN(s) || math.IsInf(s, 0):
		return strconv.FormatFloat(s, 'f', -1, 64)
	case s < 0:
		return "-" + formatDuration(-s)
	case s < 60:
		return strconv.FormatFloat(math.Floor(s), 'f', 0, 64) + " s"
	case s > float64(math.MaxInt64/int64(time.Second)):
		s = float64(math.MaxInt64 / int64(time.Second))
	}
	return session.HumanDuration(time.Duration(s * float64(time.Second)))
}

// procwalk.bytes(n) -> "1.5 GiB"
func luaBytes(L *lua.LState) int {
	L.Push(lua.LString(formatBytes(float64(L.CheckNumber(1)))))
	return 1
}

// procwalk.printable(s) -> s with control characters, invalid UTF-8 and
// other unprintable runes escaped ("a\tb\x1b[31m"), as procwalk prints
// every name: for a report that lays out process or session names, which
// print leaves tabs and line breaks in.
func (m *module) luaPrintable(L *lua.LState) int {
	s := L.CheckString(1)
	// Up to four times s: bounded as every string a Go call makes.
	m.r.checkSize(L, "procwalk.printable", float64(procwalk.PrintableLen(s)))
	L.Push(lua.LString(procwalk.Printable(s)))
	return 1
}

// procwalk.parse_bytes(s) -> number | nil, err: "2GiB", "512M", "1.5 GB".
// A number is returned as it is.
func luaParseBytes(L *lua.LState) int {
	switch v := L.Get(1).(type) {
	case lua.LNumber:
		L.Push(v)
		return 1
	case lua.LString:
		n, err := procwalk.ParseBytes(string(v))
		if err != nil {
			L.Push(lua.LNil)
			L.Push(lua.LString(err.Error()))
			return 2
		}
		L.Push(lua.LNumber(n))
		return 1
	}
	L.ArgError(1, "size string expected, got "+typeName(L.Get(1)))
	return 0
}

// procwalk.duration(seconds) -> "2 hr 5 min"
func luaDuration(L *lua.LState) int {
	L.Push(lua.LString(formatDuration(float64(L.CheckNumber(1)))))
	return 1
}

// procwalk.now() -> unix time in seconds, with fractions
func (m *module) luaNow(L *lua.LState) int {
	L.Push(lua.LNumber(float64(m.r.cfg.Now().UnixNano()) / 1e9))
	return 1
}

// procwalk.hostname() -> string
func (m *module) luaHostname(L *lua.LState) int {
	L.Push(lua.LString(m.r.cfg.Hostname))
	return 1
}

// procwalk.debounce(key, condition, n) -> bool: true when condition has
// been true in n consecutive runs (ticks), this one included; with n a
// duration ("5m", "90s", "1h30m"), true once it has been true in every run
// for that long, on the snapshots' clock (the first run it held in to this
// one: the recorded clock in a replay), as an alert rule's "for". A key
// not checked in a run, or checked false, starts again.
func (m *module) luaDebounce(L *lua.LState) int {
	key := L.CheckString(1)
	cond := lua.LVAsBool(L.Get(2))
	var hold time.Duration
	n := 0
	if s, ok := L.Get(3).(lua.LString); ok {
		d, err := time.ParseDuration(string(s))
		if err != nil || d <= 0 {
			L.ArgError(3, fmt.Sprintf("a number of runs or a duration such as \"5m\" expected, got %q", string(s)))
		}
		hold = d
	} else if n = checkInteger(L, 3); n <= 0 {
		L.ArgError(3, fmt.Sprintf("n must be at least 1, got %d", n))
	}
	m.touched[key] = true
	if !cond {
		delete(m.held, key)
		delete(m.since, key)
		L.Push(lua.LFalse)
		return 1
	}
	if hold > 0 {
		now := m.snap.Time
		since, ok := m.since[key]
		if !ok {
			m.since[key], since = now, now
		}
		L.Push(lua.LBool(now.Sub(since) >= hold))
		return 1
	}
	m.held[key]++
	L.Push(lua.LBool(m.held[key] >= n))
	return 1
}

// procwalk.snapshot() -> {time, duration, source, source_note, procs,
// listed, gone, malformed, denied = {field = count}, partial, hidepid, cpus,
// mem_total, page_size, boot_time, clock_ticks}
func (m *module) luaSnapshot(L *lua.LState) int {
	s := m.snap
	v := s.Visibility
	t := L.NewTable()
	num := func(k string, x float64) { t.RawSetString(k, lua.LNumber(x)) }
	num("time", float64(s.Time.UnixNano())/1e9)
	num("duration", s.Duration.Seconds())
	t.RawSetString("source", lua.LString(s.Source))
	t.RawSetString("source_note", lua.LString(s.SourceNote))
	num("procs", float64(len(s.Procs)))
	num("listed", float64(v.Listed))
	num("gone", float64(v.Gone))
	num("malformed", float64(v.Malformed))
	denied := L.NewTable()
	for k, n := range v.Denied {
		denied.RawSetString(k, lua.LNumber(n))
	}
	t.RawSetString("denied", denied)
	t.RawSetString("partial", lua.LBool(v.Partial()))
	t.RawSetString("hidepid", lua.LString(v.HidePID))
	num("cpus", float64(s.Host.CPUs))
	num("mem_total", float64(s.Host.MemTotalBytes))
	num("page_size", float64(s.Host.PageSizeBytes))
	num("boot_time", float64(s.Host.BootTime.Unix()))
	num("clock_ticks", float64(s.Host.ClockTicks))
	L.Push(t)
	return 1
}
