//go:build linux

package scripting

import (
	"testing"

	"github.com/procwalk/procwalk/procwalk"
)

// A scan that read stat and statm alone still shows a script every field:
// what it asks of a process is read then, through Input.ReadMore, and only
// of the processes it asks about.
func TestFieldsReadWhenAsked(t *testing.T) {
	fs, err := procwalk.NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	m := procwalk.NewMonitor(fs, procwalk.MonitorConfig{NoRates: true})
	snap, err := m.Gather()
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Snapshot: snap, ReadMore: m.ReadMore}
	src := `local pw = require 'procwalk'
local p = pw.process(110)
print(p.cmdline, p.cwd, p.user, p.uid, p.fds, p.name)
local matches = pw.processes{cmdline = "npm test"}
print(#matches, matches[1].pid)
print(#pw.processes{user = "dev", name = "node"})`
	out, err := run(t, Config{Users: loadUsers(t)}, "lazy.lua", src, in)
	if err != nil {
		t.Fatal(err)
	}
	want := "claude --continue\t/home/dev/myproj\tdev\t1000\t3\tclaude\n1\t111\n1\n"
	if out != want {
		t.Errorf("output %q, want %q", out, want)
	}
	// The cmdline filter read every process's command line; the cwd and
	// fds of 110 alone.
	for i := range snap.Procs {
		p := &snap.Procs[i]
		if got := p.Read & (procwalk.FieldCwd | procwalk.FieldFDs); (p.ID.PID == 110) != (got == procwalk.FieldCwd|procwalk.FieldFDs) {
			t.Errorf("pid %d read %s of cwd,fds", p.ID.PID, got)
		}
	}

	// Without ReadMore, what the scan did not read is nil.
	fresh, err := procwalk.NewMonitor(fs, procwalk.MonitorConfig{NoRates: true}).Gather()
	if err != nil {
		t.Fatal(err)
	}
	out, err = run(t, Config{}, "unread.lua", `print(require('procwalk').process(110).cmdline)`, Input{Snapshot: fresh})
	if err != nil || out != "nil\n" {
		t.Errorf("without ReadMore: %q, %v; want nil", out, err)
	}
}
