package main

import (
	"strings"
	"testing"
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
