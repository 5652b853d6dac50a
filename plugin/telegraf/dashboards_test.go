//go:build linux

package procwalkinput

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	gcommon "github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// dashboards_test.go builds the two Grafana dashboards of examples/ from one
// table of panels, each with its InfluxQL (InfluxDB 1.x fed by the
// compiled-in input, exec or execd) and its PromQL (Prometheus scraping
// examples/telegraf-prometheus.conf): TestDashboardJSON checks the files
// are what the table builds (UPDATE_GOLDEN=1 rewrites them), and
// TestDashboardQueries (prometheus_e2e_test.go) runs every panel's query
// against a real InfluxDB and a real Prometheus fed by procwalk. The
// foundation SDK is this test module's dependency only.

// dashPanel is one panel of both dashboards.
type dashPanel struct {
	row, title, unit string
	table            bool // a table of the latest values; else a time series
	danger           bool // a red line at procwalk's default danger threshold
	// influx and prom are the panel's queries, one per target. Grafana's
	// macros: $timeFilter, $__interval, $__rate_interval and the
	// dashboard's variables $host and $kind.
	influx, prom []string
	legend       string // PromQL legend
}

// dashPanels are the panels, by row: hosts and their sessions, tmux
// sessions, agents, cgroups against their limits, top processes, and
// procwalk's own cost.
func dashPanels() []dashPanel {
	const where = `"host" =~ /^$host$/ AND "kind" =~ /^$kind$/ AND $timeFilter`
	const by = ` GROUP BY time($__interval), "host", "kind", "session" fill(none)`
	const sel = `{host=~"$host", kind=~"$kind"}`
	last := func(field string) string {
		return `SELECT last("` + field + `") FROM "procwalk_session" WHERE ` + where + by
	}
	return []dashPanel{
		{row: "Sessions", title: "Memory by session (RSS)", unit: "bytes",
			influx: []string{last("rss_bytes")}, prom: []string{`topk(20, procwalk_session_rss_bytes` + sel + `)`}},
		{row: "Sessions", title: "Memory by session (PSS: shared pages split, needs pss = true)", unit: "bytes",
			influx: []string{last("pss_bytes")}, prom: []string{`topk(20, procwalk_session_pss_bytes` + sel + `)`}},
		{row: "Sessions", title: "CPU by session (% of one core)", unit: "percent",
			influx: []string{last("cpu_percent")},
			prom:   []string{`topk(20, rate(procwalk_session_cpu_time_seconds_total` + sel + `[$__rate_interval]) * 100)`}},
		{row: "Sessions", title: "Disk IO by session (needs io = true)", unit: "Bps",
			influx: []string{last("read_bytes_per_second"), last("write_bytes_per_second")},
			prom: []string{`topk(20, rate(procwalk_session_read_bytes_total` + sel + `[$__rate_interval]))`,
				`topk(20, rate(procwalk_session_write_bytes_total` + sel + `[$__rate_interval]))`}},
		{row: "Sessions", title: "Memory growth by session (RSS per minute)", unit: "bytes",
			influx: []string{last("rss_growth_bytes_per_minute")},
			prom:   []string{`topk(20, procwalk_session_rss_growth_bytes_per_minute` + sel + `)`}},

		{row: "tmux sessions", title: "tmux sessions", unit: "bytes", table: true,
			influx: []string{`SELECT last("procs") AS "procs", last("rss_bytes") AS "rss_bytes", last("cpu_percent") AS "cpu_percent" FROM "procwalk_session" WHERE "kind" = 'tmux' AND "host" =~ /^$host$/ AND $timeFilter GROUP BY "host", "session"`},
			prom:   []string{`procwalk_session_rss_bytes{host=~"$host", kind="tmux"}`, `procwalk_session_procs{host=~"$host", kind="tmux"}`}},

		{row: "Agents", title: "Agents by status", unit: "short",
			influx: []string{`SELECT sum("v") FROM (SELECT last("value") AS "v" FROM "procwalk_agent_status" WHERE "host" =~ /^$host$/ AND $timeFilter GROUP BY time($__interval), "host", "session", "status") GROUP BY time($__interval), "status" fill(none)`},
			prom:   []string{`sum by (status) (procwalk_agent_status{host=~"$host"})`}, legend: "{{status}}"},
		{row: "Agents", title: "Agents", unit: "percent", table: true,
			influx: []string{`SELECT last("status") AS "status", last("model") AS "model", last("context_percent") AS "context_percent", last("status_seconds") AS "status_seconds" FROM "procwalk_session" WHERE "kind" = 'agent' AND "host" =~ /^$host$/ AND $timeFilter GROUP BY "host", "session"`},
			prom:   []string{`procwalk_agent_status{host=~"$host"} == 1`, `procwalk_session_context_percent{host=~"$host", kind="agent"}`}},
		{row: "Agents", title: "Agent context used (% of the model's window)", unit: "percent",
			influx: []string{`SELECT last("context_percent") FROM "procwalk_session" WHERE "kind" = 'agent' AND "host" =~ /^$host$/ AND $timeFilter GROUP BY time($__interval), "host", "session" fill(none)`},
			prom:   []string{`procwalk_session_context_percent{host=~"$host", kind="agent"}`}},
		{row: "Agents", title: "Agent tokens per minute (input, output, cache read, cache creation)", unit: "short",
			influx: []string{`SELECT non_negative_derivative(last("input_tokens"), 1m) AS "input", non_negative_derivative(last("output_tokens"), 1m) AS "output", non_negative_derivative(last("cache_read_tokens"), 1m) AS "cache_read", non_negative_derivative(last("cache_creation_tokens"), 1m) AS "cache_creation" FROM "procwalk_session" WHERE "kind" = 'agent' AND "host" =~ /^$host$/ AND $timeFilter GROUP BY time($__interval), "host", "session" fill(none)`},
			prom: []string{`sum by (host, session) (rate(procwalk_session_input_tokens_total{host=~"$host", kind="agent"}[$__rate_interval]) * 60)`,
				`sum by (host, session) (rate(procwalk_session_output_tokens_total{host=~"$host", kind="agent"}[$__rate_interval]) * 60)`,
				`sum by (host, session) (rate(procwalk_session_cache_read_tokens_total{host=~"$host", kind="agent"}[$__rate_interval]) * 60)`,
				`sum by (host, session) (rate(procwalk_session_cache_creation_tokens_total{host=~"$host", kind="agent"}[$__rate_interval]) * 60)`}},
		{row: "Agents", title: "Agent cost (USD, by your agent_prices table)", unit: "currencyUSD",
			influx: []string{`SELECT last("cost_usd") FROM "procwalk_session" WHERE "kind" = 'agent' AND "host" =~ /^$host$/ AND $timeFilter GROUP BY time($__interval), "host", "session" fill(none)`},
			prom:   []string{`procwalk_session_cost_usd_total{host=~"$host", kind="agent"}`}},

		{row: "cgroups", title: "cgroup memory against its limit (danger at 80 %)", unit: "percent", danger: true,
			influx: []string{`SELECT last("memory_usage_percent") FROM "procwalk_session" WHERE "kind" = 'cgroup' AND "host" =~ /^$host$/ AND $timeFilter GROUP BY time($__interval), "host", "session" fill(none)`},
			prom:   []string{`procwalk_session_memory_usage_percent{host=~"$host", kind="cgroup"}`}},
		{row: "cgroups", title: "cgroups under a limit", unit: "bytes", table: true,
			influx: []string{`SELECT last("memory_usage_bytes") AS "usage", last("memory_limit_bytes") AS "limit", last("memory_usage_percent") AS "percent", last("danger") AS "danger" FROM "procwalk_session" WHERE "kind" = 'cgroup' AND "host" =~ /^$host$/ AND $timeFilter GROUP BY "host", "session"`},
			prom: []string{`procwalk_session_memory_limit_bytes{host=~"$host", kind="cgroup"}`,
				`procwalk_session_danger{host=~"$host", kind="cgroup"} and procwalk_session_memory_limit_bytes`}},

		{row: "Top processes", title: "Top processes of each session (process_top)", unit: "bytes", table: true,
			influx: []string{`SELECT last("comm") AS "comm", last("pid") AS "pid", last("rss_bytes") AS "rss_bytes", last("cpu_percent") AS "cpu_percent" FROM "procwalk_process" WHERE "host" =~ /^$host$/ AND "kind" =~ /^$kind$/ AND $timeFilter GROUP BY "host", "kind", "session", "rank"`},
			prom:   []string{`procwalk_process_rss_bytes` + sel, `procwalk_process_pid` + sel}},

		{row: "procwalk's own cost", title: "procwalk CPU (cores)", unit: "short",
			influx: []string{`SELECT non_negative_derivative(last("cpu_time_seconds"), 1s) FROM "procwalk" WHERE "host" =~ /^$host$/ AND $timeFilter GROUP BY time($__interval), "host" fill(none)`},
			prom:   []string{`rate(procwalk_cpu_time_seconds_total{host=~"$host"}[$__rate_interval])`}, legend: "{{host}}"},
		{row: "procwalk's own cost", title: "Gather time", unit: "s",
			influx: []string{`SELECT last("gather_seconds") FROM "procwalk" WHERE "host" =~ /^$host$/ AND $timeFilter GROUP BY time($__interval), "host" fill(none)`},
			prom:   []string{`procwalk_gather_seconds{host=~"$host"}`}, legend: "{{host}}"},
		{row: "procwalk's own cost", title: "procwalk peak memory and processes seen", unit: "bytes",
			influx: []string{`SELECT last("max_rss_bytes") FROM "procwalk" WHERE "host" =~ /^$host$/ AND $timeFilter GROUP BY time($__interval), "host" fill(none)`,
				`SELECT last("processes") FROM "procwalk" WHERE "host" =~ /^$host$/ AND $timeFilter GROUP BY time($__interval), "host" fill(none)`},
			prom: []string{`procwalk_max_rss_bytes{host=~"$host"}`, `procwalk_processes{host=~"$host"}`}, legend: "{{host}}"},
	}
}

// influxQuery is a dashboard's InfluxQL target: the influxdb data source
// has no type in the foundation SDK, so it is the JSON Grafana stores.
func influxTarget(ref, q string, table bool) cog.Builder[variants.Dataquery] {
	format := "time_series"
	if table {
		format = "table"
	}
	return variants.NewUnknownDataqueryBuilderFromObject(variants.UnknownDataquery{
		"refId": ref, "query": q, "rawQuery": true, "resultFormat": format,
		"datasource": map[string]any{"type": "influxdb", "uid": "${datasource}"},
	})
}

// buildDashboard builds the dashboard of one query language: "influxql" or
// "promql".
func buildDashboard(lang string) (dashboard.Dashboard, error) {
	dsType, title := "prometheus", "procwalk (Prometheus)"
	hostQuery, kindQuery := `label_values(procwalk_session_procs, host)`, `label_values(procwalk_session_procs, kind)`
	if lang == "influxql" {
		dsType, title = "influxdb", "procwalk (InfluxDB)"
		hostQuery, kindQuery = `SHOW TAG VALUES FROM "procwalk_session" WITH KEY = "host"`, `SHOW TAG VALUES FROM "procwalk_session" WITH KEY = "kind"`
	}
	ds := gcommon.DataSourceRef{Type: cog.ToPtr(dsType), Uid: cog.ToPtr("${datasource}")}
	b := dashboard.NewDashboardBuilder(title).
		Uid("procwalk-"+lang).
		Tags([]string{"procwalk"}).
		Description("Sessions (tmux, cgroups and pods, agents), their processes and procwalk's own cost; generated by plugin/telegraf/dashboards_test.go").
		Refresh("30s").
		Time("now-1h", "now").
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").Type(dsType))
	for _, v := range []struct{ name, query string }{{"host", hostQuery}, {"kind", kindQuery}} {
		b.WithVariable(dashboard.NewQueryVariableBuilder(v.name).
			Query(dashboard.StringOrMap{String: cog.ToPtr(v.query)}).
			Datasource(ds).
			Multi(true).IncludeAll(true).AllValue(".*").
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged))
	}
	row := ""
	for _, p := range dashPanels() {
		if p.row != row {
			row = p.row
			b.WithRow(dashboard.NewRowBuilder(row))
		}
		queries := p.prom
		if lang == "influxql" {
			queries = p.influx
		}
		var targets []cog.Builder[variants.Dataquery]
		for i, q := range queries {
			ref := string(rune('A' + i))
			if lang == "influxql" {
				targets = append(targets, influxTarget(ref, q, p.table))
				continue
			}
			t := prometheus.NewDataqueryBuilder().RefId(ref).Expr(q).Datasource(ds)
			if p.table {
				t.Instant().Format(prometheus.PromQueryFormatTable)
			} else {
				t.LegendFormat(cmpOr(p.legend, "{{host}} {{kind}}:{{session}}"))
			}
			targets = append(targets, t)
		}
		if p.table {
			b.WithPanel(table.NewPanelBuilder().Title(p.title).Unit(p.unit).Datasource(ds).Targets(targets).Height(8).Span(24))
			continue
		}
		ts := timeseries.NewPanelBuilder().Title(p.title).Unit(p.unit).Datasource(ds).Targets(targets).Height(8).Span(12).
			Legend(gcommon.NewVizLegendOptionsBuilder().ShowLegend(true).DisplayMode(gcommon.LegendDisplayModeList).Placement(gcommon.LegendPlacementBottom)).
			Tooltip(gcommon.NewVizTooltipOptionsBuilder().Mode(gcommon.TooltipDisplayModeMulti).Sort(gcommon.SortOrderDescending))
		if p.danger {
			ts.Thresholds(dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).Steps([]dashboard.Threshold{
				{Color: "green"}, {Value: cog.ToPtr(80.0), Color: "red"}})).
				ThresholdsStyle(gcommon.NewGraphThresholdsStyleConfigBuilder().Mode(gcommon.GraphThresholdsStyleModeLine))
		}
		b.WithPanel(ts)
	}
	return b.Build()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// dashboardFile is where the dashboard of lang is kept.
func dashboardFile(lang string) string {
	return filepath.Join("..", "..", "examples", "grafana-"+map[string]string{"influxql": "influxdb", "promql": "prometheus"}[lang]+".json")
}

// TestDashboardJSON: examples/grafana-influxdb.json and
// grafana-prometheus.json are what dashPanels builds; UPDATE_GOLDEN=1
// rewrites them.
func TestDashboardJSON(t *testing.T) {
	for _, lang := range []string{"influxql", "promql"} {
		d, err := buildDashboard(lang)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		file := dashboardFile(lang)
		if os.Getenv("UPDATE_GOLDEN") == "1" {
			if err := os.WriteFile(file, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not what dashPanels builds (%v): run UPDATE_GOLDEN=1 go test -run TestDashboardJSON in plugin/telegraf", file, err)
		}
		for _, p := range dashPanels() {
			if !strings.Contains(string(want), jsonString(p.title)) {
				t.Errorf("%s lacks the panel %q", file, p.title)
			}
		}
	}
}

// jsonString is s as JSON writes it inside a string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
