//go:build linux

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/peterbourgon/ff/v3"
	"github.com/peterbourgon/ff/v3/ffcli"
)

// completion.go is `procwalk completion bash|zsh|fish`: a script that
// completes commands, each command's flags and, for `session` and `kill
// --session`, this host's sessions. The commands and flags are written
// into the script from the flag sets, so the script matches the binary
// that printed it; the sessions come from `procwalk __complete sessions`
// (completeCommand) at the time of the <Tab>.

const completionHelp = `Prints a shell completion script for bash, zsh or fish on stdout. It
completes the commands, each command's flags, and the names of this host's
sessions (KIND:NAME) after 'procwalk session' and 'procwalk kill --session'.

  bash   eval "$(procwalk completion bash)"   in ~/.bashrc, or save it as
         /etc/bash_completion.d/procwalk
  zsh    eval "$(procwalk completion zsh)"    in ~/.zshrc, after compinit,
         or save it as _procwalk in a directory of $fpath
  fish   procwalk completion fish > ~/.config/fish/completions/procwalk.fish

Session names are looked up when <Tab> is pressed (one scan of /proc, no
rates; PROCWALK_PROC and the other PROCWALK_* variables apply).

` + exitCodesHelp

// completeCommand is the hidden command the scripts run for session names.
const completeCommand = "__complete"

func newCompletionCommand(root *ffcli.Command, e *env) *ffcli.Command {
	fs := flag.NewFlagSet("completion", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &ffcli.Command{
		Name:       "completion",
		ShortUsage: "procwalk completion bash|zsh|fish",
		ShortHelp:  "print a shell completion script: commands, flags, session names",
		LongHelp:   completionHelp,
		FlagSet:    fs,
		Exec: func(_ context.Context, args []string) error {
			if len(args) != 1 {
				return usageErrorf("completion takes one shell: bash, zsh or fish")
			}
			spec := newCompletionSpec(root)
			switch args[0] {
			case "bash":
				_, err := io.WriteString(e.stdout, spec.bash())
				return err
			case "zsh":
				_, err := io.WriteString(e.stdout, spec.zsh())
				return err
			case "fish":
				_, err := io.WriteString(e.stdout, spec.fish())
				return err
			}
			return usageErrorf("completion %q: want bash, zsh or fish", args[0])
		},
	}
}

// completionSpec is what the scripts complete: commands with their help
// line, flags per command, and which flags take a value (the word after
// such a flag is no command name).
type completionSpec struct {
	commands []specCommand
	valued   []string // "--proc", "--interval", ... of every command
}

type specCommand struct {
	name, help string
	flags      []specFlag
}

type specFlag struct {
	name, help string
	valued     bool
}

func newCompletionSpec(root *ffcli.Command) completionSpec {
	var spec completionSpec
	valued := map[string]bool{}
	for _, c := range root.Subcommands {
		sc := specCommand{name: c.Name, help: c.ShortHelp}
		c.FlagSet.VisitAll(func(f *flag.Flag) {
			b, ok := f.Value.(interface{ IsBoolFlag() bool })
			sf := specFlag{name: f.Name, help: firstClause(f.Usage), valued: !(ok && b.IsBoolFlag())}
			sc.flags = append(sc.flags, sf)
			if sf.valued {
				valued["--"+f.Name] = true
			}
		})
		spec.commands = append(spec.commands, sc)
	}
	spec.commands = append(spec.commands, specCommand{name: "help", help: "show a command's help"})
	for name := range valued {
		spec.valued = append(spec.valued, name, name[1:]) // --proc and -proc
	}
	slices.Sort(spec.valued)
	return spec
}

// firstClause is a flag's usage up to its first ';' or '(' : a short line
// for a completion menu.
func firstClause(usage string) string {
	if i := strings.IndexAny(usage, ";("); i > 0 {
		usage = usage[:i]
	}
	return strings.TrimSpace(usage)
}

func (s completionSpec) names() []string {
	var names []string
	for _, c := range s.commands {
		names = append(names, c.name)
	}
	return names
}

// flagsOf is the "--flag" list of command name; "" (no command yet) is
// the default command's.
func (s completionSpec) flagsOf(name string) []string {
	if name == "" {
		name = defaultCommand
	}
	for _, c := range s.commands {
		if c.name == name {
			var flags []string
			for _, f := range c.flags {
				flags = append(flags, "--"+f.name)
			}
			return flags
		}
	}
	return nil
}

// bash is the bash script. It reads the words from COMP_LINE itself:
// COMP_WORDS splits KIND:NAME at the colon.
func (s completionSpec) bash() string {
	var b strings.Builder
	b.WriteString(`# bash completion for procwalk: eval "$(procwalk completion bash)"
_procwalk_flags() {
  case $1 in
`)
	for _, c := range s.commands {
		fmt.Fprintf(&b, "    %s) printf '%%s\\n' %s ;;\n", c.name, strings.Join(s.flagsOf(c.name), " "))
	}
	fmt.Fprintf(&b, "    *) printf '%%s\\n' %s ;;\n  esac\n}\n", strings.Join(s.flagsOf(""), " "))
	fmt.Fprintf(&b, `_procwalk() {
  local line=${COMP_LINE:0:COMP_POINT} valued=' %s '
  local -a words
  read -ra words <<<"$line"
  [[ $line == *[[:space:]] ]] && words+=("")
  local n=${#words[@]} cmd= i w
  local cur=${words[n-1]} prev=${words[n-2]}
  for ((i = 1; i < n - 1; i++)); do
    w=${words[i]}
    if [[ $valued == *" ${w%%%%=*} "* ]]; then
      [[ $w == *=* ]] || ((i++))
      continue
    fi
    [[ $w == -* ]] && continue
    cmd=$w
    break
  done
  local IFS=$'\n'
  if [[ $cmd == session && $cur != -* && $valued != *" $prev "* ]] || [[ $cmd == kill && ($prev == --session || $prev == -session) ]]; then
    COMPREPLY=($(compgen -W "$(procwalk %s sessions 2>/dev/null)" -- "$cur"))
    # bash replaces the word after the last colon: drop what precedes it.
    if [[ $cur == *:* ]]; then
      local keep=${cur%%"${cur##*:}"}
      COMPREPLY=("${COMPREPLY[@]#"$keep"}")
    fi
    return
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_procwalk_flags "$cmd")" -- "$cur"))
  elif [[ -z $cmd || $cmd == help ]]; then
    COMPREPLY=($(compgen -W "$(printf '%%s\n' %s)" -- "$cur"))
  fi
}
complete -o default -F _procwalk procwalk
`, strings.Join(s.valued, " "), completeCommand, strings.Join(s.names(), " "))
	return b.String()
}

// zsh is the zsh script: the same logic on zsh's words and CURRENT.
func (s completionSpec) zsh() string {
	var b strings.Builder
	b.WriteString(`#compdef procwalk
# zsh completion for procwalk: eval "$(procwalk completion zsh)" after compinit
_procwalk() {
  local -a valued flags cmds refs
`)
	fmt.Fprintf(&b, "  valued=(%s)\n", strings.Join(s.valued, " "))
	var cmds []string
	for _, c := range s.commands {
		cmds = append(cmds, zshQuote(c.name+":"+c.help))
	}
	fmt.Fprintf(&b, "  cmds=(%s)\n", strings.Join(cmds, " "))
	b.WriteString(`  local cmd= i w cur=${words[CURRENT]} prev=${words[CURRENT-1]}
  for ((i = 2; i < CURRENT; i++)); do
    w=${words[i]}
    if (( ${valued[(Ie)${w%%=*}]} )); then
      [[ $w == *=* ]] || ((i++))
      continue
    fi
    [[ $w == -* ]] && continue
    cmd=$w
    break
  done
  if [[ $cmd == session && $cur != -* ]] && (( ! ${valued[(Ie)$prev]} )) || [[ $cmd == kill && ( $prev == --session || $prev == -session ) ]]; then
`)
	fmt.Fprintf(&b, "    refs=(${(f)\"$(procwalk %s sessions 2>/dev/null)\"})\n", completeCommand)
	b.WriteString(`    compadd -a refs
    return
  fi
  if [[ $cur == -* ]]; then
    case $cmd in
`)
	for _, c := range s.commands {
		fmt.Fprintf(&b, "      %s) flags=(%s) ;;\n", c.name, strings.Join(s.flagsOf(c.name), " "))
	}
	fmt.Fprintf(&b, "      *) flags=(%s) ;;\n", strings.Join(s.flagsOf(""), " "))
	b.WriteString(`    esac
    compadd -a flags
    return
  fi
  if [[ -z $cmd || $cmd == help ]]; then
    _describe command cmds
    return
  fi
  _files
}
# Autoloaded from $fpath as _procwalk: complete now; eval'd: register.
if [[ $funcstack[1] == _procwalk ]]; then
  _procwalk "$@"
else
  compdef _procwalk procwalk
fi
`)
	return b.String()
}

// zshQuote single-quotes s for zsh.
func zshQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fish is the fish script: one complete line per command and flag, each
// flag offered after its command (or, for the default command's flags,
// before any).
func (s completionSpec) fish() string {
	var b strings.Builder
	b.WriteString(`# fish completion for procwalk: procwalk completion fish > ~/.config/fish/completions/procwalk.fish
function __procwalk_command
`)
	fmt.Fprintf(&b, "    set -l valued %s\n", strings.Join(s.valued, " "))
	b.WriteString(`    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l skip 0
    for t in $tokens
        if test $skip = 1
            set skip 0
            continue
        end
        if string match -q -- '-*' $t
            if contains -- $t $valued
                set skip 1
            end
            continue
        end
        echo $t
        return
    end
end
function __procwalk_is
    set -l cmd (__procwalk_command)
    test "$cmd" = "$argv[1]"
end
complete -c procwalk -f
`)
	for _, c := range s.commands {
		fmt.Fprintf(&b, "complete -c procwalk -n '__procwalk_is \"\"' -a %s -d %s\n", fishQuote(c.name), fishQuote(c.help))
	}
	for _, c := range s.commands {
		conds := []string{"__procwalk_is " + c.name}
		if c.name == defaultCommand {
			conds = append(conds, `__procwalk_is ""`)
		}
		for _, cond := range conds {
			for _, f := range c.flags {
				arg := ""
				if f.valued {
					arg = " -r"
				}
				if c.name == "kill" && f.name == "session" {
					arg = fmt.Sprintf(" -x -a '(procwalk %s sessions 2>/dev/null)'", completeCommand)
				}
				fmt.Fprintf(&b, "complete -c procwalk -n %s -l %s%s -d %s\n", fishQuote(cond), f.name, arg, fishQuote(f.help))
			}
		}
	}
	fmt.Fprintf(&b, "complete -c procwalk -n '__procwalk_is session' -a '(procwalk %s sessions 2>/dev/null)'\n", completeCommand)
	b.WriteString("complete -c procwalk -n '__procwalk_is help' -a " + fishQuote(strings.Join(s.names(), " ")) + "\n")
	return b.String()
}

// fishQuote single-quotes s for fish.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// complete runs `procwalk __complete sessions [flags]`: the KIND:NAME of
// this host's sessions, one a line, for the completion scripts. It reads
// the flags sessions reads (and their PROCWALK_* variables) and prints
// nothing on stderr: a <Tab> must not spill messages into the command line.
func complete(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "sessions" {
		return usageErrorf("%s sessions: the completion scripts' helper", completeCommand)
	}
	g := &globals{clock: e.clock}
	fs := newFlagSet(completeCommand, g, io.Discard)
	var f sessionFlags
	f.register(fs)
	if err := ff.Parse(fs, args[1:], ff.WithEnvVarPrefix("PROCWALK")); err != nil {
		return &exitErr{Code: exitUsage}
	}
	f.noRates = true
	users, _ := g.users()
	cfg, err := f.groupConfig(overviewKinds(), users)
	if err != nil {
		return &exitErr{Code: exitUsage}
	}
	gd, err := gatherSessions(ctx, g, &f, cfg, 0)
	if err != nil {
		return &exitErr{Code: exitError}
	}
	for i := range gd.Sessions {
		fmt.Fprintln(e.stdout, printable(gd.Sessions[i].Ref()))
	}
	return nil
}
