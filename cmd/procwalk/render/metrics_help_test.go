//go:build linux

package render

import (
	"strings"
	"testing"

	"github.com/procwalk/procwalk/procwalk/metric"
)

// Every process metric is a line: its names, unit (or -) and kind.
func TestMetricsHelp(t *testing.T) {
	h := MetricsHelp()
	lines := strings.Split(strings.TrimSuffix(h, "\n"), "\n")
	if lines[0] != "METRICS (the same names in JSON, Telegraf and Lua)" || len(lines) != 1+len(metric.Processes()) {
		t.Fatalf("%d lines:\n%s", len(lines), h)
	}
	if !strings.Contains(h, "\n  rss_bytes (rss)") || !strings.Contains(h, " bytes     gauge\n") {
		t.Errorf("no rss line:\n%s", h)
	}
}
