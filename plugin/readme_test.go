//go:build linux

package plugin

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
)

// TestREADMELayout: README.md has the layout of Telegraf's plugin READMEs
// (docs/developers/README_TEMPLATE.md): a title, a description, "Global
// configuration options", "Configuration" holding sample.conf exactly (the
// block Telegraf's readme_config_includer fills from `toml @sample.conf`),
// "Metrics" with a section per measurement procwalk writes, and "Example
// Output" of valid line protocol whose measurements are those documented.
func TestREADMELayout(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	sample, err := os.ReadFile("sample.conf")
	if err != nil {
		t.Fatal(err)
	}
	var h2 []string
	for _, m := range regexp.MustCompile(`(?m)^(#{1,2}) (.*)$`).FindAllStringSubmatch(readme, -1) {
		if m[1] == "#" && len(h2) == 0 {
			if m[2] != "procwalk Input Plugin" {
				t.Errorf("title %q, want Telegraf's form: procwalk Input Plugin", m[2])
			}
			continue
		}
		if m[1] == "##" {
			h2 = append(h2, m[2])
		}
	}
	want := []string{"Global configuration options <!-- @/docs/includes/plugin_config.md -->", "Configuration", "Metrics", "Example Output"}
	if len(h2) < len(want) || !slices.Equal(h2[:len(want)], want) {
		t.Errorf("sections %q, want Telegraf's first: %q", h2, want)
	}
	section := func(title string) string {
		_, rest, ok := strings.Cut(readme, "\n## "+title+"\n")
		if !ok {
			return ""
		}
		body, _, _ := strings.Cut(rest, "\n## ")
		return body
	}

	_, block, ok := strings.Cut(section("Configuration"), "```toml @sample.conf\n")
	block, _, closed := strings.Cut(block, "```")
	if !ok || !closed || block != string(sample) {
		t.Errorf("the Configuration section's toml @sample.conf block is not sample.conf: copy sample.conf into it")
	}

	metrics := section("Metrics")
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^### (`?)([a-z_]+)").FindAllStringSubmatch(metrics, -1) {
		documented[m[2]] = true
	}
	for _, name := range []string{MeasurementSession, MeasurementAgent, MeasurementProcess, MeasurementSelf,
		MeasurementProcstat, MeasurementAction, "procwalk_alert"} {
		if !documented[name] {
			t.Errorf("Metrics has no section (###) for %s", name)
		}
	}
	if !strings.Contains(metrics, "procstat_lookup") {
		t.Errorf("Metrics does not document procstat_lookup")
	}

	_, example, ok := strings.Cut(section("Example Output"), "```text\n")
	example, _, closed = strings.Cut(example, "```")
	if !ok || !closed || example == "" {
		t.Fatal("Example Output has no ```text block")
	}
	dec := lineprotocol.NewDecoderWithBytes([]byte(example))
	lines := 0
	for dec.Next() {
		name, err := dec.Measurement()
		if err != nil {
			t.Fatalf("Example Output line %d: %v", lines+1, err)
		}
		for {
			k, _, err := dec.NextTag()
			if err != nil {
				t.Fatalf("Example Output line %d: %v", lines+1, err)
			}
			if k == nil {
				break
			}
		}
		for {
			k, _, err := dec.NextField()
			if err != nil {
				t.Fatalf("Example Output line %d: %v", lines+1, err)
			}
			if k == nil {
				break
			}
		}
		if _, err := dec.Time(lineprotocol.Nanosecond, time.Time{}); err != nil {
			t.Fatalf("Example Output line %d: %v", lines+1, err)
		}
		if !documented[string(name)] {
			t.Errorf("Example Output writes %s, which Metrics does not document", name)
		}
		lines++
	}
	if lines == 0 {
		t.Error("Example Output has no line")
	}
}

// selfTable is plugin/README.md's table of the procwalk line's fields.
func selfTable() string {
	var b strings.Builder
	b.WriteString("| field | type | unit | kind | meaning |\n|---|---|---|---|---|\n")
	for _, f := range SelfFields() {
		kind := ""
		if f.Kind != 0 {
			kind = f.Kind.String()
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", f.Name, f.Type, f.Unit, kind, f.Help)
	}
	return b.String()
}

// TestREADMESelfTable: plugin/README.md's table of the procwalk line is
// SelfFields; UPDATE_GOLDEN=1 go test ./plugin -run TestREADMESelfTable
// rewrites it.
func TestREADMESelfTable(t *testing.T) {
	const begin, end = "<!-- begin procwalk fields: generated from SelfFields by go test; UPDATE_GOLDEN=1 rewrites it -->\n", "<!-- end procwalk fields -->\n"
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	head, rest, ok := strings.Cut(string(b), begin)
	got, tail, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("README.md lacks the markers of the procwalk fields table:\n%s%s", begin, end)
	}
	want := selfTable()
	if got == want {
		return
	}
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile("README.md", []byte(head+begin+want+end+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's procwalk fields table is not SelfFields; UPDATE_GOLDEN=1 go test ./plugin -run TestREADMESelfTable rewrites it. Want:\n%s", want)
}
