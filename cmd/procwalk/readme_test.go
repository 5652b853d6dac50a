//go:build linux

package main

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/procwalk/procwalk/plugin"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

// metricTable is procwalk/metric/README.md's naming table, built from the metric
// catalogue: one name per metric in every output, for a process, a session
// or both.
func metricTable() string {
	var b strings.Builder
	b.WriteString("| name | short names | heading | unit | kind | reads | of a process | of a session |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, d := range metric.All() {
		short := make([]string, len(d.Aliases))
		for i, a := range d.Aliases {
			short[i] = "`" + a + "`"
		}
		reads := "stat, statm"
		switch {
		case d.Agent:
			reads = "agent transcript"
		case strings.HasPrefix(d.When, "cgroup"):
			reads = "cgroupfs"
		case d.Needs != 0:
			reads = strings.NewReplacer("smaps", "smaps_rollup", "owner", "the owner of /proc/PID",
				"swap", "status (nothing when no swap is in use)").Replace(d.Needs.String())
		}
		if d.Kind == metric.Rate {
			reads += ", two gathers"
		}
		unit := d.Unit
		switch {
		case d.Flag:
			unit = "true/false"
		case unit == "":
			unit = "number"
		}
		process, session := "-", "-"
		if d.OfProcess() {
			process = d.Help
		}
		if d.OfSession() {
			session = d.HelpFor(true)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s | %s |\n",
			d.Name, strings.Join(short, " "), d.Label, unit, d.Kind, reads, process, session)
	}
	return b.String()
}

// procwalk/metric/README.md's naming table is the catalogue's: a metric added or renamed
// there fails this test until the README says so. UPDATE_GOLDEN=1 go test
// ./cmd/procwalk -run TestREADMEMetricTable rewrites it.
func TestREADMEMetricTable(t *testing.T) {
	checkGenerated(t, "../../procwalk/metric/README.md", "metric table", metricTable())
}

// fieldTable is a table of plugin/README.md: the fields of a measurement,
// its numbers from the metric catalogue (for a session or a process), then
// its strings.
func fieldTable(metrics []metric.Desc, session bool, strs []plugin.StringField) string {
	var b strings.Builder
	b.WriteString("| field | type | unit | kind | when | meaning |\n|---|---|---|---|---|---|\n")
	for _, d := range metrics {
		typ := "float"
		switch {
		case d.Flag:
			typ = "bool"
		case d.Integer:
			typ = "int"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", d.Name, typ, d.Unit, d.Kind, fieldWhen(&d), d.HelpFor(session))
	}
	for _, f := range strs {
		fmt.Fprintf(&b, "| `%s` | string | | | %s | %s |\n", f.Name, f.When, f.Help)
	}
	return b.String()
}

// fieldWhen says when Telegraf writes a metric: what its Desc says, else
// the options that read what it needs; and from the second sample for a
// rate.
func fieldWhen(d *metric.Desc) string {
	var parts []string
	if d.When != "" {
		parts = append(parts, d.When)
	}
	for _, n := range []struct {
		f    procwalk.Fields
		what string
	}{
		{procwalk.FieldSmaps, "`pss`"},
		{procwalk.FieldIO, "`io`"},
		{procwalk.FieldStatus, "the BPF source"},
		{procwalk.FieldOwner, "user sessions or the BPF source"},
		{procwalk.FieldSwap, "`swap`"},
		{procwalk.FieldFDs, "ranked by it"},
		{procwalk.FieldOOMScore, "ranked by it"},
	} {
		if d.Needs&n.f != 0 && d.When == "" {
			parts = append(parts, n.what)
		}
	}
	if d.Kind == metric.Rate {
		parts = append(parts, "from the 2nd sample")
	}
	if len(parts) == 0 {
		return "always"
	}
	return strings.Join(parts, ", ")
}

// plugin/README.md's field tables are the catalogue's: UPDATE_GOLDEN=1 go
// test ./cmd/procwalk -run TestPluginREADMEFieldTables rewrites them.
func TestPluginREADMEFieldTables(t *testing.T) {
	checkGenerated(t, "../../plugin/README.md", "procwalk_session fields", fieldTable(plugin.SessionFields(), true, plugin.SessionStrings()))
	checkGenerated(t, "../../plugin/README.md", "procwalk_process fields", fieldTable(plugin.ProcessFields(), false, plugin.ProcessStrings()))
}

// checkGenerated checks that the section of file between the markers
// "<!-- begin NAME: ... -->" and "<!-- end NAME -->" is want, and with
// UPDATE_GOLDEN=1 writes it there.
func checkGenerated(t *testing.T, file, name, want string) {
	t.Helper()
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := "<!-- begin "+name+": generated from procwalk/metric by go test; UPDATE_GOLDEN=1 rewrites it -->\n", "<!-- end "+name+" -->\n"
	head, rest, ok := strings.Cut(string(doc), begin)
	got, tail, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("%s lacks the markers of the %s:\n%s%s", file, name, begin, end)
	}
	if got == want {
		return
	}
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(file, []byte(head+begin+want+end+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the %s differs from the catalogue's; UPDATE_GOLDEN=1 go test -run %s rewrites it. Want:\n%s", file, name, t.Name(), want)
}

// The README's table of kinds lists every kind, in the order procwalk
// reports them: adding a kind adds its row there.
func TestREADMEKindTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "| kind | one session per | name | attributes |\n|---|---|---|---|\n")
	if !ok {
		t.Fatal(`README.md lacks the table of kinds ("| kind | one session per | name | attributes |")`)
	}
	var kinds []string
	for _, line := range strings.Split(table, "\n") {
		name, found := strings.CutPrefix(line, "| `")
		if !found {
			break
		}
		name, _, _ = strings.Cut(name, "`")
		kinds = append(kinds, name)
	}
	if want := session.Kinds(); !slices.Equal(kinds, want) {
		t.Errorf("README's table of kinds lists %v, want a row for each of %v, in that order", kinds, want)
	}
}

// The README's table of Frame fields lists every exported field of
// frame.Frame and its methods but Check and WithReader, in order: a field
// added to the Frame fails this test until the README says what it holds.
func TestREADMEFrameTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "| Frame field | type | what |\n|---|---|---|\n")
	if !ok {
		t.Fatal(`README.md lacks the table of Frame fields ("| Frame field | type | what |")`)
	}
	var got []string
	for _, line := range strings.Split(table, "\n") {
		name, found := strings.CutPrefix(line, "| `")
		if !found {
			break
		}
		name, _, _ = strings.Cut(name, "`")
		name, _, _ = strings.Cut(name, "(")
		got = append(got, name)
	}
	var want []string
	ft := reflect.TypeOf(frame.Frame{})
	for i := range ft.NumField() {
		if f := ft.Field(i); f.IsExported() {
			want = append(want, f.Name)
		}
	}
	for i := range ft.NumMethod() {
		if m := ft.Method(i).Name; m != "Check" && m != "WithReader" {
			want = append(want, m)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("README.md's Frame fields %q, want %q", got, want)
	}
}
