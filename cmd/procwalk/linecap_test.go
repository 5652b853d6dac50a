//go:build linux

package main

import (
	"strings"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
)

// longLines prints, logs and fails with lines far over what Telegraf's
// execd reads (64 KiB): each must reach stderr cut to
// procwalk.MaxLogLineBytes, with the cut marked.
const longLines = `
local pw = require "procwalk"
print(("p"):rep(100000))
pw.log(("l"):rep(100000))
pw.alert{message = ("a"):rep(100000)}
error(("e"):rep(200000))
`

func TestStderrLinesCapped(t *testing.T) {
	script := writeScript(t, "long.lua", longLines)
	for _, tt := range []struct {
		name string
		r    func() result
		want int // cut lines: print, log and alert (a run's error keeps 2 KiB of its message)
	}{
		{"run --lines-only", func() result { return scriptCLI(t, "run", "--no-rates", "--lines-only", script) }, 3},
		{"telegraf exec", func() result { return telegrafCLI(t, "", "--script", script) }, 3},
		{"telegraf --execd", func() result { return telegrafCLI(t, "\n", "--execd", "--script", script) }, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r()
			cut := 0
			for _, line := range strings.SplitAfter(r.stderr, "\n") {
				if len(line) > procwalk.MaxLogLineBytes {
					t.Errorf("a stderr line of %d bytes: %.100q...", len(line), line)
				}
				if strings.HasSuffix(line, " ... [line cut at 4 KiB]\n") {
					cut++
				}
			}
			if cut != tt.want {
				t.Errorf("%d lines cut, want %d; stderr:\n%.3000s", cut, tt.want, r.stderr)
			}
			if !strings.Contains(r.stderr, "eee... (error message of 195.3 KiB cut at 2.0 KiB)") {
				t.Errorf("no error cut at 2 KiB; stderr:\n%.3000s", r.stderr)
			}
		})
	}
}
