//go:build linux

package scripting

import (
	"fmt"
	"strings"

	"github.com/procwalk/procwalk/procwalk/textwidth"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"
)

// api.go is the Lua API as one table: each function and method of the
// module, its arguments, what it returns and what it does, beside the Go
// function implementing it. The module is built from it (Loader), and
// `procwalk run --api` prints it (Reference), so the reference cannot
// drift from the code; scripting/README.md's copy is checked against it.

// apiFunc is one function or method of the Lua API.
type apiFunc struct {
	// on is where it is called: "pw." (the module), "p:" (a process), "s:"
	// (a session), or "" (a global such as print).
	on      string
	name    string
	args    string // as written in a call: "metric [, n [, filter]]"
	returns string // "{process}", "session | nil, err"; "" for none
	doc     string // what it does, one line
	fn      func(m *module) lua.LGFunction
}

// Places of apiFunc.on.
const (
	onModule  = "pw."
	onProcess = "p:"
	onSession = "s:"
)

// apiFuncs is the API, in the order the reference lists it.
func apiFuncs() []apiFunc {
	return []apiFunc{
		{onModule, "processes", "[filter]", "{process}", "every process in pid order; filter: function(p) -> bool, or a table of conditions (comm, name, user, uid, state, ppid, kernel, cmdline, session)", func(m *module) lua.LGFunction { return m.luaProcesses }},
		{onModule, "process", "pid | id", "process | nil, err", `the process of a pid, or of an id "PID@STARTTICKS" (only that very process)`, func(m *module) lua.LGFunction { return m.luaProcess }},
		{onModule, "top", "metric [, n [, filter]]", "{process}", "the n (5) processes with the highest metric, highest first; those without a value left out", func(m *module) lua.LGFunction { return m.luaTop }},
		{onModule, "sessions", "[kind]", "{session} | nil, err", "every session (of kind), by kind then name", func(m *module) lua.LGFunction { return m.luaSessions }},
		{onModule, "session", `"KIND:NAME"`, "session | nil, err", "one session; err lists the sessions of that kind", func(m *module) lua.LGFunction { return m.luaSession }},
		{onModule, "kill", "target [, opts]", "report | nil, err", `kill a process, session, pid or "KIND:NAME"; opts: signal, grace, scope (process, tree, group), dry_run`, func(m *module) lua.LGFunction { return m.luaKill }},
		{onModule, "emit", "measurement, tags, fields", "true | nil, err", "one metric (line protocol), dated by the snapshot", func(m *module) lua.LGFunction { return m.luaEmit }},
		{onModule, "alert", "{message=, level=, session=, process=, ...}", "true", "a warning (or info, critical) log record and a procwalk_alert metric; other keys become fields", func(m *module) lua.LGFunction { return m.luaAlert }},
		{onModule, "log", "...", "", "an info log record: the arguments joined by spaces", func(m *module) lua.LGFunction { return m.luaLog }},
		{onModule, "debounce", `key, condition, n | "5m"`, "bool", "true once condition held in n runs in a row, or in every run for a duration (snapshot clock)", func(m *module) lua.LGFunction { return m.luaDebounce }},
		{onModule, "bytes", "n", "string", `a size: "1.5 GiB", "-200.0 MiB"`, func(*module) lua.LGFunction { return luaBytes }},
		{onModule, "parse_bytes", "s", "number | nil, err", `a size read: "2GiB", "512M", "1.5 GB"`, func(*module) lua.LGFunction { return luaParseBytes }},
		{onModule, "duration", "seconds", "string", `two units: "2 hr 5 min", "42 s"`, func(*module) lua.LGFunction { return luaDuration }},
		{onModule, "printable", "s", "string", `s escaped as procwalk prints names: "a\tb\x1b[31m"`, func(m *module) lua.LGFunction { return m.luaPrintable }},
		{onModule, "wrap", "s [, width [, indent]]", "string", "each line longer than width (80) cells broken, at a comma, colon or space, a word never cut; the rest after indent", func(m *module) lua.LGFunction { return m.luaWrap }},
		{onModule, "width", "s", "number", "the cells s takes on a terminal: 2 for a CJK character or an emoji", func(*module) lua.LGFunction { return luaWidth }},
		{onModule, "pad", `s, width [, "right"]`, "string", "s padded with spaces to width cells (on the left with \"right\"); s as it is when wider", func(m *module) lua.LGFunction { return m.luaPad }},
		{onModule, "now", "", "number", "unix time, seconds (a replay: the recorded frame's)", func(m *module) lua.LGFunction { return m.luaNow }},
		{onModule, "hostname", "", "string", "this host's name (a replay: the recorded host's)", func(m *module) lua.LGFunction { return m.luaHostname }},
		{onModule, "snapshot", "", "table", "the scan: time, duration, source, procs, listed, gone, denied, partial, cpus, mem_total ...", func(m *module) lua.LGFunction { return m.luaSnapshot }},
		{onProcess, "parent", "", "process | nil", "its parent", func(m *module) lua.LGFunction { return m.procParent }},
		{onProcess, "children", "", "{process}", "its children, in pid order", func(m *module) lua.LGFunction { return m.procChildren }},
		{onProcess, "descendants", "", "{process}", "everything below it, depth first", func(m *module) lua.LGFunction { return m.procDescendants }},
		{onProcess, "tree", "", "{{process=, depth=}}", "it (depth 0) and its descendants", func(m *module) lua.LGFunction { return m.procTree }},
		{onProcess, "session", "kind", "session | nil", "the session of that kind holding it", func(m *module) lua.LGFunction { return m.procSession }},
		{onProcess, "kill", "[opts]", "report | nil, err", "pw.kill of this process", func(m *module) lua.LGFunction { return m.procKill }},
		{onSession, "processes", "", "{process}", "its members, in pid order", func(m *module) lua.LGFunction { return m.sessionProcesses }},
		{onSession, "roots", "", "{process}", "the members whose parent is not a member", func(m *module) lua.LGFunction { return m.sessionRoots }},
		{onSession, "top", "metric [, n]", "{process}", "the n (5) members with the highest metric", func(m *module) lua.LGFunction { return m.sessionTop }},
		{onSession, "tree", "", "{{process=, depth=}}", "each root and the members below it", func(m *module) lua.LGFunction { return m.sessionTree }},
		{onSession, "kill", "[opts]", "report | nil, err", "every member, and what they fork meanwhile", func(m *module) lua.LGFunction { return m.sessionKill }},
	}
}

// apiValue is a value of the module table.
type apiValue struct{ name, doc string }

func apiValues() []apiValue {
	return []apiValue{
		{"state", "a table kept from run to run (watch, telegraf)"},
		{"args", `the script's arguments: {"a=1", "b", a = "1"}`},
		{"dry_run", "every kill is a dry run (--dry-run, a replay)"},
		{"mode", `"run", "watch" or "telegraf"`},
		{"script", `the script's name: "memory-guard.lua"`},
		{"KiB, MiB, GiB, TiB", "1024, 1024^2, ..."},
	}
}

// funcsOn returns the Go functions of the API called on on.
func (m *module) funcsOn(on string) map[string]lua.LGFunction {
	out := map[string]lua.LGFunction{}
	for _, f := range apiFuncs() {
		if f.on == on {
			out[f.name] = f.fn(m)
		}
	}
	return out
}

// Reference returns the Lua API reference: each function and method with
// its arguments, what it returns and what it does, one line each; the
// module's values; the fields of process and session objects. It is what
// `procwalk run --api` prints to a pipe, made from the table the module is
// built from.
func Reference() string { return ReferenceAt(0) }

// ReferenceAt is Reference fitted to width cells (0: unlimited, one line a
// function): at a terminal's width each description wraps at spaces
// (textwidth.Hang), so the terminal breaks no word.
func ReferenceAt(width int) string {
	var b strings.Builder
	b.WriteString("procwalk Lua API: local pw = require \"procwalk\"\n")
	sections := []struct{ title, on string }{{"Functions", onModule}, {"Process methods (p)", onProcess}, {"Session methods (s)", onSession}}
	for _, sec := range sections {
		var sigs, docs []string
		for _, f := range apiFuncs() {
			if f.on != sec.on {
				continue
			}
			sig := f.on + f.name + "(" + f.args + ")"
			if strings.HasPrefix(f.args, "{") {
				sig = f.on + f.name + f.args
			}
			if f.returns != "" {
				sig += " -> " + f.returns
			}
			sigs, docs = append(sigs, sig), append(docs, f.doc)
		}
		fmt.Fprintf(&b, "\n%s\n", sec.title)
		writeColumns(&b, sigs, docs, width)
	}
	var names, docs []string
	for _, v := range apiValues() {
		names, docs = append(names, "pw."+v.name), append(docs, v.doc)
	}
	names, docs = append(names, "print(...)"), append(docs, "the report: stdout (telegraf: I! lines), control characters escaped")
	b.WriteString("\nValues\n")
	writeColumns(&b, names, docs, width)
	b.WriteString("\nProcess fields (p.NAME; numbers also by catalogue name, nil when not read)\n")
	writeList(&b, processFields())
	b.WriteString("\nSession fields (s.NAME; numbers also by catalogue name)\n")
	writeList(&b, sessionFields())
	return b.String()
}

// writeColumns writes each name and its doc, the docs in a column: one
// line each at width 0, else wrapped to width (textwidth.Hang).
func writeColumns(b *strings.Builder, names, docs []string, width int) {
	w := 0
	for _, n := range names {
		w = max(w, textwidth.Width(n))
	}
	for i, n := range names {
		for _, l := range textwidth.Hang("  "+n, docs[i], w+2, width) {
			b.WriteString(l + "\n")
		}
	}
}

// writeList writes names comma-separated, wrapped at 80 columns.
func writeList(b *strings.Builder, names []string) {
	line := " "
	for i, n := range names {
		item := " " + n
		if i < len(names)-1 {
			item += ","
		}
		if len(line)+len(item) > 80 {
			b.WriteString(line + "\n")
			line = " "
		}
		line += item
	}
	b.WriteString(line + "\n")
}
