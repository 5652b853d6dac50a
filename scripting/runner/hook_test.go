//go:build linux

package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/scripting"
)

type testBatch struct{ lines []string }

func (b *testBatch) Add(m string, _ map[string]string, f map[string]any) error {
	b.lines = append(b.lines, fmt.Sprintf("%s %v", m, f["n"]))
	return nil
}

func (b *testBatch) AddAction(e kill.ActionEvent) {
	b.lines = append(b.lines, fmt.Sprintf("action %d", e.PID))
}

// A run's metrics and kill outcomes join the gather's batch when it ends,
// in order; a failed run's metrics are dropped, its kills' outcomes kept
// (they happened); each outcome is logged; a run without a batch (a
// worker's) adds nothing.
func TestHook(t *testing.T) {
	script, err := scripting.Compile("rule.lua", []byte(`local pw = require "procwalk"
pw.state.n = (pw.state.n or 0) + 1
pw.emit("m", {}, {n = pw.state.n})
if pw.state.n == 2 then error("second") end`))
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	h := &Hook{Script: script, Warn: func(msg string) { warned = append(warned, msg) },
		Hint: func(err error) error { return fmt.Errorf("%w (hint)", err) }}
	h.Start(scripting.Config{Emitter: &Checked{Enc: textEncoder{}, To: h.Keep}, Mode: "telegraf"})
	defer h.Close()
	f := fixtureFrame(t)
	var b testBatch
	if err := h.Run(context.Background(), f, &b); err != nil {
		t.Fatal(err)
	}
	h.Action(kill.ActionEvent{PID: 7, Comm: "evil\x1b]0;x\a"}) // as the Killer reports one, during a run
	if err := h.Run(context.Background(), f, &b); err == nil || !strings.HasSuffix(err.Error(), "(hint)") {
		t.Errorf("second run: %v; want the hint", err)
	}
	if err := h.Run(context.Background(), f, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(b.lines, "|"); got != "m 1|action 7" {
		t.Errorf("batch %q; want %q", got, "m 1|action 7")
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "pid 7 (evil\\x1b]0;x\\x07)") {
		t.Errorf("warned %q; want pid 7 and its name escaped", warned)
	}
	var b2 testBatch
	h.Action(kill.ActionEvent{PID: 8})
	if err := h.Run(context.Background(), f, &b2); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(b2.lines, "|"); got != "action 8|m 4" {
		t.Errorf("batch %q; want %q", got, "action 8|m 4")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Telegraf stopping us mid-gather
	if err := h.Run(ctx, f, nil); err == nil || strings.HasSuffix(err.Error(), "(hint)") {
		t.Errorf("an interrupted run: %v; want its error without the hint", err)
	}
}
