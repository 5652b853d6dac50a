//go:build linux

package main

import (
	"strings"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/bpfsource"
)

// source_test.go: --source picks the snapshot source; a BPF source that
// cannot be used is one note, and the gather reads /proc.

func TestSourceFlag(t *testing.T) {
	clearEnv(t)
	r := cli(t, fixture("ps", "--source", "ebpf")...)
	if r.code != exitUsage || !strings.Contains(r.stderr, `--source: unknown snapshot source "ebpf": use one of proc, bpf, auto`) {
		t.Errorf("--source ebpf: exit %d, stderr %q; want a usage error listing the sources", r.code, r.stderr)
	}

	// A fixture root is never iterated by BPF: asked for, it is one note.
	r = cli(t, fixture("ps", "--no-rates", "--source", "bpf")...)
	note := "procwalk: note: bpf source not used: --proc is " + fixtureProc + ", not the host's /proc; read /proc instead\n"
	if r.code != exitOK || strings.Count(r.stderr, "procwalk: note: bpf") != 1 || !strings.Contains(r.stderr, note) || !strings.Contains(r.stdout, "(sd-pam)") {
		t.Errorf("--source bpf on a fixture: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// auto reads /proc there without a word.
	r = cli(t, fixture("ps", "--no-rates")...)
	if r.code != exitOK || strings.Contains(r.stderr, "bpf") {
		t.Errorf("auto on a fixture: exit %d, stderr %q", r.code, r.stderr)
	}
}

// The self-metrics say which source ran and why.
func TestSourceSelfMetrics(t *testing.T) {
	clearEnv(t)
	for _, c := range []struct {
		source, want string
	}{
		{"proc", `source="proc",source_note="asked for proc"`},
		{"auto", `source="proc",source_note="auto: bpf --proc is ` + fixtureProc + `, not the host's /proc"`},
		{"bpf", `source="proc",source_note="bpf source not used: --proc is ` + fixtureProc + `, not the host's /proc; read /proc instead"`},
	} {
		r := cli(t, fixture("telegraf", "--source", c.source)...)
		var self string
		for _, line := range strings.Split(r.stdout, "\n") {
			if strings.HasPrefix(line, "procwalk,schema=") {
				self = line
			}
		}
		if r.code != exitOK || !strings.Contains(self, c.want) {
			t.Errorf("--source %s: exit %d, self line %q, want it to hold %s", c.source, r.code, self, c.want)
		}
	}
}

// run, watch and telegraf --script take the same --source: on a fixture,
// bpf is one note and /proc, which the script sees in pw.snapshot().
func TestSourceScripts(t *testing.T) {
	script := writeScript(t, "src.lua", `local pw = require("procwalk") local s = pw.snapshot() print("source " .. s.source .. ": " .. s.source_note)`)
	note := "bpf source not used: --proc is " + scriptProc + ", not the host's /proc; read /proc instead"
	for _, c := range []struct {
		name string
		args []string
		want string // on stdout
		warn string // the note's line on stderr
	}{
		{"run", []string{"run", script, "--source", "bpf"}, "source proc: " + note + "\n", "procwalk: note: " + note},
		{"watch", []string{"watch", script, "--count", "1", "--source", "bpf"}, "source proc: " + note + "\n", "procwalk: note: " + note},
		{"telegraf --script", []string{"telegraf", "--script", script, "--source", "bpf"}, `source="proc",source_note="` + note + `"`, "W! " + note},
	} {
		r := scriptCLI(t, c.args[0], c.args[1:]...)
		if r.code != exitOK || !strings.Contains(r.stdout, c.want) {
			t.Errorf("%s --source bpf: exit %d, stdout %q, want it to hold %q\nstderr:\n%s", c.name, r.code, r.stdout, c.want, r.stderr)
		}
		if strings.Count(r.stderr, c.warn) != 1 {
			t.Errorf("%s --source bpf: stderr %q, want the note once", c.name, r.stderr)
		}
	}
}

// TestIntegrationSourceScripts: as root on a kernel that allows it, watch
// reads the host through the BPF source under auto, and run and telegraf
// --script (one-shot) do when asked for bpf.
func TestIntegrationSourceScripts(t *testing.T) {
	integration(t)
	clearEnv(t)
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	if err := bpfsource.Allowed(fs); err != nil {
		t.Skipf("the BPF source is not allowed here: %v", err)
	}
	script := writeScript(t, "src.lua", `print("source " .. require("procwalk").snapshot().source)`)
	for _, c := range []struct {
		args []string
		want string
	}{
		// auto loads the BPF source for the modes that gather again and
		// again; a one-shot command reads /proc unless asked for bpf.
		{[]string{"run", script}, "source proc\n"},
		{[]string{"run", script, "--source", "bpf"}, "source bpf\n"},
		{[]string{"watch", script, "--count", "1"}, "source bpf\n"},
		{[]string{"telegraf", "--session-kinds", "user", "--script", script}, `source="proc",source_note="auto: a one-shot command reads /proc`},
		{[]string{"telegraf", "--session-kinds", "user", "--script", script, "--source", "bpf"}, `source="bpf"`},
	} {
		r := cli(t, c.args...)
		if r.code != exitOK || !strings.Contains(r.stdout, c.want) {
			t.Errorf("%s: exit %d, stdout %q, want it to hold %q\nstderr:\n%s", c.args[0], r.code, r.stdout, c.want, r.stderr)
		}
	}
}
