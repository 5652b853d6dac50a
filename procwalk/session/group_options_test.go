//go:build linux

package session

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestGroupOptionsConfig(t *testing.T) {
	cfg, err := Options{
		Kinds:         []string{KindTree, KindAgent},
		TmuxSockets:   []string{"work"},
		DangerPercent: 90,
		Trees:         []string{"web=1234", "^nginx"},
		Agents:        []string{"goose=^goose$"},
	}.Config()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Trees) != 2 || cfg.Trees[0].Name != "web" || cfg.Trees[0].PID != 1234 || cfg.Trees[1].Pattern == nil {
		t.Errorf("trees = %+v", cfg.Trees)
	}
	if n := len(cfg.Agents); n != len(DefaultAgents())+1 || cfg.Agents[n-1].Name != "goose" {
		t.Errorf("agents = %+v, want the defaults and goose", cfg.Agents)
	}
	if cfg.DangerPercent != 90 || len(cfg.Tmux.Sockets) != 1 || cfg.Tmux.Sockets[0] != "work" {
		t.Errorf("config = %+v", cfg)
	}

	for _, tt := range []struct {
		opts Options
		want string
	}{
		{Options{DangerPercent: 0}, "danger_percent 0: want a percentage above 0, at most 100"},
		{Options{DangerPercent: math.NaN()}, "danger_percent NaN: want a percentage above 0, at most 100"},
		{Options{DangerPercent: 120}, "danger_percent 120: want a percentage above 0, at most 100"},
		{Options{DangerPercent: 80, Kinds: []string{"screen"}}, `session_kinds "screen": want any of ` + strings.Join(Kinds(), ", ")},
		{Options{DangerPercent: 80, AgentFirstRead: "1000"}, `agent_first_read "1000": 1000 is less than 64 KiB: too little to find the last turn; want a size such as 8MiB, or all`},
		{Options{DangerPercent: 80, AgentTurnTimeout: "-1s"}, "agent_turn_timeout -1s: must not be negative (0 means the default)"},
		{Options{DangerPercent: 80, AgentActiveWithin: "soon"}, `agent_active_within "soon": want a duration such as 10s or 5m`},
		{Options{DangerPercent: 80, AgentBusyCPU: -5}, "agent_busy_cpu -5: must not be negative (0 means the default)"},
		{Options{DangerPercent: 80, TmuxSockets: []string{"a", " "}}, "tmux_sockets has an empty entry: give tmux socket names (-L) or paths (-S)"},
		{Options{DangerPercent: 80, CgroupRoot: "testdata/no-such-dir"}, `cgroup_root "testdata/no-such-dir": not a directory: give where cgroupfs is mounted, or leave it out for /sys/fs/cgroup`},
		{Options{DangerPercent: 80, Trees: []string{"x="}}, `trees: bad session config: tree "x=": want [NAME=]PID, [NAME=]/path/to.pid or [NAME=]REGEX`},
		{Options{DangerPercent: 80, GroupsFile: "testdata/no-such-file"}, "groups: bad session config: groups file: open testdata/no-such-file: no such file or directory"},
	} {
		_, err := tt.opts.Config()
		var oe *OptionError
		if !errors.As(err, &oe) || err.Error() != tt.want {
			t.Errorf("Config() error = %v, want the OptionError %q", err, tt.want)
		}
	}
}

// The flag an option's error names: singular for the repeatable lists,
// --kind for session_kinds, else the key with dashes.
func TestOptionFlag(t *testing.T) {
	for option, want := range map[string]string{
		"trees": "tree", "agents": "agent", "agent_transcripts": "agent-transcript", "agent_context_windows": "agent-context-window",
		"session_kinds": "kind", "tmux_sockets": "tmux-sockets", "danger_percent": "danger-percent", "groups": "groups",
	} {
		if got := OptionFlag(option); got != want {
			t.Errorf("OptionFlag(%q) = %q, want %q", option, got, want)
		}
	}
	if got := (&OptionError{Option: "agent_transcripts"}).Flag(); got != "agent-transcript" {
		t.Errorf("OptionError.Flag: %q", got)
	}
}
