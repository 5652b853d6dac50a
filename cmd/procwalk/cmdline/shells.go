//go:build linux

package cmdline

import "strings"

// shells.go holds the completion script of each shell: each asks procwalk
// itself what completes the word under the cursor, through the hidden
// command named in ShellScript's call.

// Shells are the shells ShellScript writes a script for.
func Shells() []string { return []string{"bash", "zsh", "fish"} }

// ShellScript is shell's completion script, calling the hidden command
// complete; ok is false for a shell not in Shells.
func ShellScript(shell, complete string) (script string, ok bool) {
	switch shell {
	case "bash":
		script = bashScript
	case "zsh":
		script = zshScript
	case "fish":
		script = fishScript
	default:
		return "", false
	}
	return strings.ReplaceAll(script, "__COMPLETE__", complete), true
}

// bashScript hands the line up to the cursor (bytes: LC_ALL=C) and
// COMP_WORDBREAKS to procwalk, which returns a directive line and the
// words to offer, already escaped for the word readline replaces.
const bashScript = `# bash completion for procwalk: eval "$(procwalk completion bash)"
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

// zshScript passes the words, unquoted, and adds what procwalk returns
// with compadd, which quotes each on insertion; a tab in a line parts a
// word from its description.
const zshScript = `#compdef procwalk
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

// fishScript passes the tokens, unescaped, and the token under the
// cursor; fish escapes what it inserts, and shows what follows a tab as
// the description.
const fishScript = `# fish completion for procwalk: procwalk completion fish > ~/.config/fish/completions/procwalk.fish
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
