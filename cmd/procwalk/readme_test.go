//go:build linux

package main

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/session"
)

// metricTable is the README's naming table, built from the metric
// catalogue: one name per metric in ps, JSON, Telegraf and Lua.
func metricTable() string {
	var b strings.Builder
	b.WriteString("| name (JSON, Telegraf, Lua, `--sort`, `--columns`) | short names | ps heading | unit | type | reads | meaning |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, d := range procwalk.Metrics() {
		short := make([]string, len(d.Aliases))
		for i, a := range d.Aliases {
			short[i] = "`" + a + "`"
		}
		reads := "stat, statm"
		if d.Needs != 0 {
			reads = strings.ReplaceAll(d.Needs.String(), "smaps", "smaps_rollup")
		}
		if d.Type == procwalk.Rate {
			reads += ", two gathers"
		}
		unit := d.Unit
		if unit == "" {
			unit = "number"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s |\n",
			d.Name, strings.Join(short, " "), d.Label, unit, d.Type, reads, d.Help)
	}
	return b.String()
}

// The README's naming table is the catalogue's: a metric added or renamed
// there fails this test until the README says so.
func TestREADMEMetricTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if table := metricTable(); !strings.Contains(string(readme), table) {
		t.Errorf("README.md lacks the metric table; paste this under \"### Metric names\":\n%s", table)
	}
}

// sessionMetricTable is the README's table of session metrics, built from
// their catalogue.
func sessionMetricTable() string {
	var b strings.Builder
	b.WriteString("| name (Telegraf, Lua) | Lua short names | unit | type | meaning |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, d := range session.Metrics() {
		short := make([]string, len(d.Aliases))
		for i, a := range d.Aliases {
			short[i] = "`" + a + "`"
		}
		unit := d.Unit
		switch {
		case d.Flag:
			unit = "true/false"
		case unit == "":
			unit = "number"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", d.Name, strings.Join(short, " "), unit, d.Type, d.Help)
	}
	return b.String()
}

func TestREADMESessionMetricTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if table := sessionMetricTable(); !strings.Contains(string(readme), table) {
		t.Errorf("README.md lacks the session metric table; paste this under \"### Session metric names\":\n%s", table)
	}
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
