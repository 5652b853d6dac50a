//go:build linux

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/peterbourgon/ff/v3"
	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
	"github.com/procwalk/procwalk/procwalk/session"
	"github.com/procwalk/procwalk/scripts"
)

// completion.go is `procwalk completion bash|zsh|fish`: a small script
// per shell (cmdline.ShellScript) that asks the binary itself what
// completes the word under the cursor (`procwalk __complete ...`,
// completeCommand). cmdline.Completer completes commands, each command's
// flags and the values their declarations list (cmdline.Spec: --sort,
// --kind, --source, --view ...); this file says what completes the rest:
// this host's sessions after `session` and `kill --session` (also as
// --session=KIND:NAME), bundled script names after `run` and `watch`,
// shells after `completion`.

// completeCommand is the hidden command the scripts run for session names.
const completeCommand = "__complete"

func newCompletionCommand(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("completion", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &ffcli.Command{
		Name:       "completion",
		ShortUsage: "procwalk completion bash|zsh|fish",
		ShortHelp:  "print a shell completion script: commands, flags, values, session names",
		LongHelp:   helpText("completion"),
		FlagSet:    fs,
		Exec: func(_ context.Context, args []string) error {
			if len(args) != 1 {
				return usageErrorf("completion takes one shell: bash, zsh or fish")
			}
			script, ok := cmdline.ShellScript(args[0], completeCommand)
			if !ok {
				return usageErrorf("completion %q: want bash, zsh or fish", args[0])
			}
			_, err := io.WriteString(e.stdout, script)
			return err
		},
	}
}

// newCompleter is procwalk's completer over root's commands; sessions
// gathers the session references with the flags it is given.
func newCompleter(root *ffcli.Command, sessions func(flags []string) []string) *cmdline.Completer {
	sessionWords := func(words []string) []string {
		// The flags of words that the sessions command knows (--proc,
		// --tmux-socket ...), less those that would hide sessions.
		return sessions(cmdline.FlagsOf(cmdline.Program{Root: root}.Command("sessions").FlagSet, words, "kind", "sort"))
	}
	return &cmdline.Completer{
		Root:      root,
		Default:   defaultCommand,
		TakesRest: func(command string) bool { return commandNamed(command).takesRest },
		Args: func(command string, pos int, cur string, words []string) cmdline.Completion {
			switch {
			case command == "session" && pos == 0:
				return cmdline.Match(sessionWords(words), cur)
			case command == "completion" && pos == 0:
				return cmdline.Match(cmdline.Shells(), cur)
			case (command == "run" || command == "watch") && pos == 0:
				return completeScripts(cur)
			case command == "guard" || (command == "run" || command == "watch") && pos != 0:
				return cmdline.Completion{Files: true} // the command, the script's arguments
			}
			return cmdline.Completion{}
		},
		// The values of the flags whose Spec has none: this host's
		// sessions, the bundled scripts.
		Values: func(command, name, value, prefix string, words []string) cmdline.Completion {
			switch name {
			case "script":
				return completeScripts(value).WithPrefix(prefix)
			case "session":
				return cmdline.Choose(sessionWords(words), value, prefix, false)
			case "cgroup":
				var refs []string
				for _, r := range sessionWords(words) {
					if strings.HasPrefix(r, session.KindCgroup+":") {
						refs = append(refs, r)
					}
				}
				return cmdline.Choose(refs, value, prefix, false)
			}
			return cmdline.Completion{}
		},
	}
}

// completeScripts are the bundled scripts' names; a word that looks like
// a path completes as a file.
func completeScripts(cur string) cmdline.Completion {
	if strings.ContainsAny(cur, "/.") {
		return cmdline.Completion{Files: true}
	}
	var out cmdline.Completion
	for _, s := range scripts.List() {
		if strings.HasPrefix(s.Name, cur) {
			out.Words = append(out.Words, cmdline.Candidate{Word: s.Name, Help: s.Description})
		}
	}
	if len(out.Words) == 0 {
		out.Files = true
	}
	return out
}

// complete runs the hidden helper the scripts call:
//
//	procwalk __complete bash LINE WORDBREAKS   bash: the line up to the cursor
//	procwalk __complete words -- WORD... CUR   zsh, fish: unquoted words
//	procwalk __complete sessions [flags]       the session references alone
//
// It prints nothing on stderr: a <Tab> must not spill messages into the
// command line.
func complete(ctx context.Context, root *ffcli.Command, e *env, args []string) error {
	c := newCompleter(root, func(flags []string) []string {
		refs, _ := sessionRefs(ctx, e, flags)
		return refs
	})
	switch {
	case len(args) == 3 && args[0] == "bash":
		c.WriteBash(e.stdout, args[1], args[2])
		return nil
	case len(args) >= 2 && args[0] == "words" && args[1] == "--":
		c.WriteWords(e.stdout, args[2:])
		return nil
	case len(args) >= 1 && args[0] == "sessions":
		refs, err := sessionRefs(ctx, e, args[1:])
		for _, r := range refs {
			fmt.Fprintln(e.stdout, r)
		}
		return err
	}
	return usageErrorf("%s: the completion scripts' helper", completeCommand)
}

// sessionRefs are the KIND:NAME of this host's sessions (the default
// kinds), gathered with flags and the PROCWALK_* variables. Its errors
// carry an exit code and no message.
func sessionRefs(ctx context.Context, e *env, flags []string) ([]string, error) {
	// A completion prints only candidates: the source's note (a BPF
	// fallback) is dropped, not written into the shell's line.
	g := &globals{clock: e.clock, note: func(string) {}}
	fs := newFlagSet(completeCommand, g, io.Discard)
	var f sessionFlags
	f.register(fs)
	if err := ff.Parse(fs, flags, ff.WithEnvVarPrefix("PROCWALK")); err != nil {
		return nil, &exitErr{Code: exitUsage}
	}
	f.noRates = true
	users, _ := g.users()
	cfg, err := f.groupConfig(session.OverviewKinds(), users)
	if err != nil {
		return nil, &exitErr{Code: exitUsage}
	}
	gd, err := gatherSessions(ctx, g, &f, cfg, 0)
	if err != nil {
		return nil, &exitErr{Code: exitError}
	}
	refs := make([]string, 0, len(gd.Sessions))
	for i := range gd.Sessions {
		refs = append(refs, printable(gd.Sessions[i].Ref()))
	}
	return refs, nil
}
