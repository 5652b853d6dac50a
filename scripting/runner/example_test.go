//go:build linux

package runner_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/scripting"
	"github.com/procwalk/procwalk/scripting/runner"
)

// countEncoder writes "measurement count=N" lines: a host's encoder is
// line protocol.
type countEncoder struct{}

func (countEncoder) AppendMetric(dst []byte, m string, _ map[string]string, f map[string]any, _ time.Time) ([]byte, error) {
	return fmt.Appendf(dst, "%s count=%v\n", m, f["count"]), nil
}

func (countEncoder) AppendActions(dst []byte, _ ...kill.ActionEvent) ([]byte, error) { return dst, nil }

// A rule that emits how many processes use more than 1 GiB, run once on a
// frame of the fixture /proc; its line is written when the run ends.
func Example() {
	fs, _ := procwalk.NewFS("../testdata/proc")
	snap, err := fs.Snapshot(procwalk.AllFields)
	if err != nil {
		fmt.Println(err)
		return
	}
	script, err := scripting.Compile("big.lua", []byte(`
local pw = require "procwalk"
local n = 0
for _, p in ipairs(pw.processes()) do
  if p.rss > pw.GiB then n = n + 1 end
end
pw.emit("big", {}, {count = n})`))
	if err != nil {
		fmt.Println(err)
		return
	}
	r := &runner.Run{Script: script, Out: &runner.Lines{Enc: countEncoder{}}, Stderr: os.Stderr}
	r.Start(scripting.Config{Emitter: &runner.Checked{Enc: countEncoder{}, To: r.Keep}, Mode: "run"})
	defer r.Close()
	if _, err := r.Frame(context.Background(), frame.Frame{Snapshot: snap}, os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output: big count=2
}
