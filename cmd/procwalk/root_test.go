//go:build linux

package main

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// TestCommandsTable: the table newRoot builds from names every command by
// its own name, in the order of the full tree, which help lists.
func TestCommandsTable(t *testing.T) {
	e := newEnv(nil, io.Discard, io.Discard)
	full := newRoot(&globals{}, e, io.Discard, "")
	cs := commands()
	if len(full.Subcommands) != len(cs)+2 {
		t.Fatalf("%d commands in the tree, %d in the table (+ completion and man)", len(full.Subcommands), len(cs))
	}
	for i, c := range cs {
		if got := c.build(&globals{}, e).Name; got != c.name || full.Subcommands[i].Name != c.name {
			t.Errorf("table entry %d %q builds %q; the tree has %q there", i, c.name, got, full.Subcommands[i].Name)
		}
		only := newRoot(&globals{}, e, io.Discard, c.name)
		if len(only.Subcommands) != 1 || only.Subcommands[0].Name != c.name {
			t.Errorf("newRoot(%q) built %d commands", c.name, len(only.Subcommands))
		}
	}
}

// TestPlainCommand: only a command named plainly, without a config file,
// is built alone; help, completion, man, unknown names and flags that do
// not parse before the name build every command.
func TestPlainCommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "sessions"},
		{[]string{"ps", "--columns", "pid"}, "ps"},
		{[]string{"--pss", "--proc=/x", "TREE", "1"}, "tree"},
		{[]string{"telegraf", "--execd"}, "telegraf"},
		{[]string{"--kind", "tmux"}, ""}, // the default command's flag: cmdline.Program.Args decides
		{[]string{"help", "ps"}, ""},
		{[]string{"--help"}, ""},
		{[]string{"man"}, ""},
		{[]string{"completion", "bash"}, ""},
		{[]string{completeCommand, "ps", "--"}, ""},
		{[]string{"sesions"}, ""},
		{[]string{"--config", "f", "ps"}, ""},
		{[]string{"ps", "--config=f"}, ""},
		{[]string{"run", "-config", "f", "x.lua"}, ""},
		{[]string{"run", "config.lua"}, "run"},
	} {
		if got := plainCommand(c.args); got != c.want {
			t.Errorf("plainCommand(%q) = %q, want %q", c.args, got, c.want)
		}
	}
	t.Setenv("PROCWALK_CONFIG", "/nonexistent/config")
	if got := plainCommand([]string{"ps"}); got != "" {
		t.Errorf("with PROCWALK_CONFIG set: %q, want every command", got)
	}
}

// TestConfigOptionOfAnotherCommand: a config file may set any command's
// flags (ps reads sessions' --kind without complaint), so a config file
// builds every command to know them.
func TestConfigOptionOfAnotherCommand(t *testing.T) {
	dir := t.TempDir()
	cfg := dir + "/procwalk.conf"
	if err := os.WriteFile(cfg, []byte("kind tmux\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	e := newEnv(nil, &out, &errOut)
	err := runEnv(t.Context(), e, []string{"--config", cfg, "ps", "--proc", "../../procwalk/testdata/proc", "--no-rates", "--columns", "pid"})
	if err != nil || out.Len() == 0 {
		t.Errorf("ps with a config file setting sessions' kind: %v\n%s", err, errOut.String())
	}
}
