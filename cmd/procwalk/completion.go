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

	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/plugin"
	"github.com/procwalk/procwalk/procwalk/bpfsource"
	"github.com/procwalk/procwalk/procwalk/session"
	"github.com/procwalk/procwalk/scripts"
)

// completion.go is `procwalk completion bash|zsh|fish`: a small script
// per shell that asks the binary itself what completes the word under the
// cursor (`procwalk __complete ...`, completeCommand): commands, each
// command's flags, the values of flags that take one of a few (--sort,
// --kind, --source, --view ...), this host's sessions after `session` and
// `kill --session` (also as --session=KIND:NAME), bundled script names
// after `run` and `watch`, shells after `completion`. One Go function
// decides (completer.complete); each shell only quotes: bash gets the
// words already escaped for where the cursor is (completeBash), zsh and
// fish quote what they insert themselves.

// completeCommand is the hidden command the scripts run for session names.
const completeCommand = "__complete"

// completionShells are the shells completion writes a script for.
func completionShells() []string { return []string{"bash", "zsh", "fish"} }

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
			var script string
			switch args[0] {
			case "bash":
				script = bashCompletion
			case "zsh":
				script = zshCompletion
			case "fish":
				script = fishCompletion
			default:
				return usageErrorf("completion %q: want bash, zsh or fish", args[0])
			}
			_, err := io.WriteString(e.stdout, strings.ReplaceAll(script, "__COMPLETE__", completeCommand))
			return err
		},
	}
}

// bashCompletion hands the line up to the cursor (bytes: LC_ALL=C) and
// COMP_WORDBREAKS to procwalk, which returns a directive line and the
// words to offer, already escaped for the word readline replaces.
const bashCompletion = `# bash completion for procwalk: eval "$(procwalk completion bash)"
_procwalk() {
  local LC_ALL=C
  local -a out
  mapfile -t out < <(command procwalk __COMPLETE__ bash "${COMP_LINE:0:COMP_POINT}" "$COMP_WORDBREAKS" 2>/dev/null)
  COMPREPLY=("${out[@]:1}")
  case ${out[0]} in
    *files*) compopt -o default ;;
  esac
  case ${out[0]} in
    *nospace*) compopt -o nospace ;;
  esac
}
complete -F _procwalk procwalk
`

// zshCompletion passes the words, unquoted, and adds what procwalk returns
// with compadd, which quotes each on insertion; a tab in a line parts a
// word from its description.
const zshCompletion = `#compdef procwalk
# zsh completion for procwalk: eval "$(procwalk completion zsh)" after compinit
_procwalk() {
  local -a out words_ cands disp suffix
  local l
  # PREFIX is the word up to the cursor, its opening quote (if any) left
  # out: compadd quotes to match.
  words_=("${(@Q)words[2,CURRENT-1]}" "${(Q)PREFIX}")
  out=("${(@f)$(command procwalk __COMPLETE__ words -- "${(@)words_}" 2>/dev/null)}")
  case $out[1] in
    *files*) _files; return ;;
  esac
  [[ $out[1] == *nospace* ]] && suffix=(-S '')
  for l in "${(@)out[2,-1]}"; do
    [[ -z $l ]] && continue
    cands+=("${l%%$'\t'*}")
    if [[ $l == *$'\t'* ]]; then
      disp+=("${l%%$'\t'*}  -- ${l#*$'\t'}")
    else
      disp+=("$l")
    fi
  done
  (( $#cands )) || return 1
  compadd -l -d disp "${(@)suffix}" -a cands
}
# Autoloaded from $fpath as _procwalk: complete now; eval'd: register.
if [[ $funcstack[1] == _procwalk ]]; then
  _procwalk "$@"
else
  compdef _procwalk procwalk
fi
`

// fishCompletion passes the tokens, unescaped, and the token under the
// cursor; fish escapes what it inserts, and shows what follows a tab as
// the description.
const fishCompletion = `# fish completion for procwalk: procwalk completion fish > ~/.config/fish/completions/procwalk.fish
function __procwalk_complete
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l cur (commandline -ct)
    set -l unescaped (string unescape -- $cur 2>/dev/null)
    and set cur $unescaped
    set -l out (command procwalk __COMPLETE__ words -- $tokens "$cur" 2>/dev/null)
    if string match -q -- '*files*' $out[1]
        __fish_complete_path (commandline -ct)
        return
    end
    printf '%s\n' $out[2..-1]
end
complete -c procwalk -f -a '(__procwalk_complete)'
`

// completion is what completes a word: candidates (each the whole word,
// unquoted, with an optional description) or file names.
type completion struct {
	words []candidate
	files bool // the shell completes file names instead
	// nospace: the word goes on (a comma-separated list), no space after.
	nospace bool
}

type candidate struct{ word, help string }

// directive is the first line of __complete's output.
func (c completion) directive() string {
	d := ":words"
	if c.files {
		d += ",files"
	}
	if c.nospace {
		d += ",nospace"
	}
	return d
}

// completer completes procwalk's command lines from the commands' flag
// sets; sessions come from one gather, done only when a session name is
// asked for.
type completer struct {
	root     *ffcli.Command
	sessions func(args []string) []string // the refs, gathered with the flags in args
}

// complete says what completes cur, the word under the cursor, after the
// words before it (the command line after "procwalk", unquoted).
func (c *completer) complete(words []string, cur string) completion {
	cmd, pos, pending := c.parse(words)
	if pending != "" { // the value of "--flag VALUE"
		return c.values(cmd, pending, cur, "", words)
	}
	if strings.HasPrefix(cur, "-") && cur != "-" && pos >= 0 && !(cmd != nil && takesRest(cmd.Name) && pos > 0) {
		if name, value, ok := strings.Cut(strings.TrimLeft(cur, "-"), "="); ok {
			dashes := cur[:len(cur)-len(strings.TrimLeft(cur, "-"))]
			return c.values(cmd, name, value, dashes+name+"=", words)
		}
		return c.flags(cmd, cur)
	}
	switch {
	case cmd == nil:
		return c.commands(cur)
	case cmd.Name == "help" && pos == 0:
		return c.commands(cur)
	case cmd.Name == "session" && pos == 0:
		return match(c.sessionWords(words), cur)
	case cmd.Name == "completion" && pos == 0:
		return match(completionShells(), cur)
	case (cmd.Name == "run" || cmd.Name == "watch") && pos == 0:
		return c.scripts(cur)
	case cmd.Name == "guard" || (cmd.Name == "run" || cmd.Name == "watch") && pos != 0:
		return completion{files: true} // the command, the script's arguments
	}
	return completion{}
}

// parse finds the command among words (nil: none yet; the help pseudo
// command has a FlagSet of its own), how many arguments follow it before
// the cursor (-1: after "--", where no flag is), and a flag still waiting
// for its value.
func (c *completer) parse(words []string) (cmd *ffcli.Command, pos int, pending string) {
	fs := c.root.FlagSet
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "--" {
			return cmd, -1, ""
		}
		if strings.HasPrefix(w, "-") && w != "-" && !(cmd != nil && takesRest(cmd.Name) && pos > 0) {
			name, _, inline := strings.Cut(strings.TrimLeft(w, "-"), "=")
			f := fs.Lookup(name)
			if f == nil && cmd == nil {
				f = subcommand(c.root, defaultCommand).FlagSet.Lookup(name)
			}
			if f != nil && !inline && !cmdline.IsBoolFlag(f) {
				if i == len(words)-1 {
					return cmd, pos, name
				}
				i++
			}
			continue
		}
		if cmd == nil {
			if w == "help" {
				cmd = &ffcli.Command{Name: "help", FlagSet: flag.NewFlagSet("help", flag.ContinueOnError)}
			} else if cmd = findCommand(c.root, w); cmd == nil {
				return &ffcli.Command{Name: w, FlagSet: flag.NewFlagSet(w, flag.ContinueOnError)}, 1, ""
			}
			fs = cmd.FlagSet
			continue
		}
		pos++
	}
	return cmd, pos, ""
}

// takesRest reports whether a command's arguments after the first belong
// to something else (guard's command, a script's own flags).
func takesRest(command string) bool { return command == "guard" }

// findCommand is root's command called name, or nil.
func findCommand(root *ffcli.Command, name string) *ffcli.Command {
	for _, c := range root.Subcommands {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// commands are the command names with their help lines.
func (c *completer) commands(cur string) completion {
	var out completion
	for _, sc := range c.root.Subcommands {
		if strings.HasPrefix(sc.Name, cur) {
			out.words = append(out.words, candidate{sc.Name, sc.ShortHelp})
		}
	}
	if strings.HasPrefix("help", cur) {
		out.words = append(out.words, candidate{"help", "show a command's help"})
	}
	return out
}

// flags are the flags of cmd (nil: the default command's) that start as
// cur does, written with two dashes.
func (c *completer) flags(cmd *ffcli.Command, cur string) completion {
	if cmd == nil {
		cmd = subcommand(c.root, defaultCommand)
	}
	var out completion
	prefix := strings.TrimLeft(cur, "-")
	cmd.FlagSet.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, prefix) {
			out.words = append(out.words, candidate{"--" + f.Name, firstClause(f.Usage)})
		}
	})
	return out
}

// values completes the value of flag name of cmd: value is what is typed
// of it, and each word is written after prefix ("--sort=", or "" when the
// value is a word of its own).
func (c *completer) values(cmd *ffcli.Command, name, value, prefix string, words []string) completion {
	command := defaultCommand
	if cmd != nil {
		command = cmd.Name
	}
	var out completion
	list := false // a comma-separated list: complete its last item
	var vals []string
	switch name {
	case "session":
		vals = c.sessionWords(words)
	case "cgroup":
		for _, r := range c.sessionWords(words) {
			if strings.HasPrefix(r, session.KindCgroup+":") {
				vals = append(vals, r)
			}
		}
	case "sort":
		if command == "ps" {
			vals = psSortNames()
		} else {
			vals = sessionSortNames()
		}
	case "kind":
		vals, list = append(session.Kinds(), "all"), true
	case "session-kinds":
		vals, list = session.Kinds(), true
	case "source":
		vals = []string{bpfsource.ModeAuto, bpfsource.ModeProc, bpfsource.ModeBPF}
	case "view":
		vals = []string{"processes", "sessions", "agents"}
	case "signal":
		if command == "telegraf" {
			vals = []string{plugin.SignalStdin, plugin.SignalNone, plugin.SignalSIGHUP, plugin.SignalSIGUSR1, plugin.SignalSIGUSR2}
		} else {
			vals = []string{"TERM", "INT", "HUP", "QUIT", "USR1", "USR2", "KILL"}
		}
	case "schema":
		vals = []string{plugin.SchemaProcwalk, plugin.SchemaProcstat}
	case "kill":
		vals = []string{"tree", "biggest"}
	case "script-isolation":
		vals = []string{isolationWorker, isolationOff}
	case "process-top-by":
		vals = plugin.ProcessMetrics()
	case "procstat-tag-with":
		vals, list = plugin.ProcstatTagWith(), true
	case "columns":
		vals, list = strings.Split(render.ProcessColumnNames, ","), true
	case "script":
		return c.withPrefix(c.scripts(value), prefix)
	case "show":
		var names []string
		for _, s := range scripts.List() {
			names = append(names, s.Name)
		}
		vals = names
	case "proc", "passwd", "config", "groups", "cgroup-root", "tmux-socket":
		return completion{files: prefix == ""}
	default:
		return out
	}
	done := ""
	if list {
		if i := strings.LastIndexByte(value, ','); i >= 0 {
			done, value = value[:i+1], value[i+1:]
		}
		out.nospace = true
	}
	for _, v := range vals {
		if strings.HasPrefix(v, value) && !(list && slices.Contains(strings.Split(done, ","), v)) {
			out.words = append(out.words, candidate{word: prefix + done + v})
		}
	}
	return out
}

func (c *completer) withPrefix(out completion, prefix string) completion {
	for i := range out.words {
		out.words[i].word = prefix + out.words[i].word
	}
	return out
}

// scripts are the bundled scripts' names; a word that looks like a path
// completes as a file.
func (c *completer) scripts(cur string) completion {
	if strings.ContainsAny(cur, "/.") {
		return completion{files: true}
	}
	var out completion
	for _, s := range scripts.List() {
		if strings.HasPrefix(s.Name, cur) {
			out.words = append(out.words, candidate{s.Name, s.Description})
		}
	}
	if len(out.words) == 0 {
		out.files = true
	}
	return out
}

// sessionWords are this host's session references, gathered with the flags
// of words that the sessions command knows (--proc, --tmux-socket ...).
func (c *completer) sessionWords(words []string) []string {
	if c.sessions == nil {
		return nil
	}
	fs := subcommand(c.root, "sessions").FlagSet
	flags, _ := cmdline.SplitFlags(fs, words)
	var known []string
	for i := 0; i < len(flags); i++ {
		name, _, inline := strings.Cut(strings.TrimLeft(flags[i], "-"), "=")
		f := fs.Lookup(name)
		if f == nil || name == "kind" || name == "sort" {
			continue // another command's flag, or one that would hide sessions
		}
		known = append(known, flags[i])
		if !inline && !cmdline.IsBoolFlag(f) && i+1 < len(flags) {
			i++
			known = append(known, flags[i])
		}
	}
	return c.sessions(known)
}

// match is the words that start with cur.
func match(words []string, cur string) completion {
	var out completion
	for _, w := range words {
		if strings.HasPrefix(w, cur) {
			out.words = append(out.words, candidate{word: w})
		}
	}
	return out
}

// firstClause is a flag's usage up to its first ';' or '(' : a short line
// for a completion menu.
func firstClause(usage string) string {
	if i := strings.IndexAny(usage, ";("); i > 0 {
		usage = usage[:i]
	}
	return strings.TrimSpace(usage)
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
	c := &completer{root: root, sessions: func(flags []string) []string {
		refs, _ := sessionRefs(ctx, e, flags)
		return refs
	}}
	switch {
	case len(args) == 3 && args[0] == "bash":
		words, cur := cmdline.ShellWords(args[1])
		out := c.complete(words, cur)
		fmt.Fprintln(e.stdout, out.directive())
		var cands []string
		for _, w := range out.words {
			cands = append(cands, w.word)
		}
		for _, w := range cmdline.BashReplies(args[1], args[2], cur, cands) {
			fmt.Fprintln(e.stdout, w)
		}
		return nil
	case len(args) >= 2 && args[0] == "words" && args[1] == "--":
		words := args[2:]
		cur := ""
		if len(words) > 0 {
			words, cur = words[:len(words)-1], words[len(words)-1]
		}
		out := c.complete(words, cur)
		fmt.Fprintln(e.stdout, out.directive())
		for _, w := range out.words {
			line := oneLine(w.word)
			if w.help != "" {
				line += "\t" + oneLine(w.help)
			}
			fmt.Fprintln(e.stdout, line)
		}
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

// oneLine keeps a word on its line of __complete's output.
func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\t", " ").Replace(s) }

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
	cfg, err := f.groupConfig(overviewKinds(), users)
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
