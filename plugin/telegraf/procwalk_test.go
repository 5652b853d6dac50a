//go:build linux

package procwalkinput

import (
	"os"
	"regexp"
	"testing"

	"github.com/influxdata/telegraf"
	"github.com/influxdata/telegraf/config"
	"github.com/influxdata/telegraf/testutil"
)

// loadOne loads a Telegraf config the way telegraf itself does and returns
// the one procwalk input in it, initialised.
func loadOne(t *testing.T, conf string) *Procwalk {
	t.Helper()
	c := config.NewConfig()
	if err := c.LoadConfigData([]byte(conf), ""); err != nil {
		t.Fatalf("telegraf rejected the config: %v\n%s", err, conf)
	}
	if len(c.Inputs) != 1 {
		t.Fatalf("%d inputs loaded, want 1", len(c.Inputs))
	}
	ri := c.Inputs[0]
	if err := ri.Init(); err != nil {
		t.Fatalf("Init: %v", err)
	}
	p, ok := ri.Input.(*Procwalk)
	if !ok {
		t.Fatalf("inputs.procwalk is a %T", ri.Input)
	}
	return p
}

func TestTelegrafGathersSessionsFromItsConfig(t *testing.T) {
	p := loadOne(t, `
[[inputs.procwalk]]
  proc = "../testdata/proc"
  passwd = "../testdata/passwd"
  session_kinds = ["user"]
  agent_active_within = "30s"
  danger_percent = 90.0
  swap = true
  process_top = 2
  skip_self_metrics = true
`)
	// The session options are session.Options, embedded in plugin.Input.
	if p.ProcessTop != 2 || len(p.Kinds) != 1 || p.AgentActiveWithin != "30s" || p.DangerPercent != 90 || !p.Swap {
		t.Fatalf("options not decoded into the embedded plugin.Input and session.Options: %+v", p.Input)
	}
	if p.Log == nil {
		t.Error("Telegraf did not inject its logger into Log")
	}
	var acc testutil.Accumulator
	if err := p.Gather(&acc); err != nil {
		t.Fatal(err)
	}
	// A line's gauges and its counters are two metrics of one series and
	// time, typed for Prometheus; InfluxDB merges them into one point.
	page := int64(os.Getpagesize())
	alice := map[string]string{"kind": "user", "session": "alice", "user": "alice"}
	acc.AssertContainsTaggedFields(t, "procwalk_session", map[string]interface{}{
		"procs": int64(3), "threads": int64(5), "zombies": int64(1), "partial": false,
		"rss_bytes": 3000 * page, "swap_bytes": int64(192 << 10), "start_unix_seconds": int64(1700000010),
	}, alice)
	acc.AssertContainsTaggedFields(t, "procwalk_session", map[string]interface{}{"cpu_time_seconds": 8.77}, alice)
	for _, m := range acc.GetTelegrafMetrics() {
		_, counter := m.GetField("cpu_time_seconds")
		_, gauge := m.GetField("rss_bytes")
		if counter && m.Type() != telegraf.Counter || gauge && m.Type() != telegraf.Gauge {
			t.Errorf("%s %v: type %v", m.Name(), m.FieldList(), m.Type())
		}
	}
	if !acc.HasMeasurement("procwalk_process") {
		t.Error("no procwalk_process metrics with process_top = 2")
	}
	// Each of 2 sessions and 3 processes: its gauges and its counters; a
	// process's strings (comm, cmdline, state) a third, untyped.
	if got := acc.NMetrics(); got != 2*2+3*3 {
		t.Errorf("%d metrics, want 13: 2 sessions and 3 processes", got)
	}
	if err := acc.FirstError(); err != nil {
		t.Errorf("AddError on a complete gather: %v", err)
	}
}

// Every default that sample.conf documents, uncommented, is a valid config.
func TestSampleConfigDefaultsLoad(t *testing.T) {
	sample := (&Procwalk{}).SampleConfig()
	uncommented := regexp.MustCompile(`(?m)^  # ([a-z_]+ = )`).ReplaceAllString(sample, "  $1")
	if uncommented == sample {
		t.Fatal("sample.conf has no commented defaults")
	}
	p := loadOne(t, uncommented)
	defer p.Close() // source = "auto" may have loaded the BPF program
	if p.Schema != "procwalk" || p.Proc != "/proc" || p.SourceMode != "auto" {
		t.Errorf("defaults not decoded: %+v", p.Input)
	}
}

func TestTelegrafRejectsABadOption(t *testing.T) {
	c := config.NewConfig()
	if err := c.LoadConfigData([]byte("[[inputs.procwalk]]\n  process_top = 1000\n"), ""); err != nil {
		t.Fatal(err)
	}
	if err := c.Inputs[0].Init(); err == nil || !regexp.MustCompile(`process_top`).MatchString(err.Error()) {
		t.Errorf("Init = %v, want an error naming process_top", err)
	}
}
