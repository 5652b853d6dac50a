//go:build linux

package kill

import (
	"path"
	"slices"
	"strings"
)

// interpreter.go finds what an interpreter runs: "python3 -u
// /usr/bin/jupyter-lab" runs jupyter-lab, "python3 -m jupyterlab" the
// module jupyterlab, "bash -e /opt/ttyd" ttyd. The protected list is
// matched against that name too, so an option before the script (a
// shebang line's "#!/usr/bin/python3 -u" puts one there) cannot take a
// protected program its protection. Each interpreter's options are read
// as its own option parser reads them: which take a value, as the rest of
// a cluster of short options ("-Wignore") or as the next argument ("-W
// ignore"), and which end the options.

// interpreterSyntax is how one interpreter reads its options.
type interpreterSyntax struct {
	// valued are the short options whose value is the rest of their
	// cluster or, when nothing follows in the cluster, the next argument.
	valued string
	// attached are the short options that take the rest of their cluster
	// as an optional value and never the next argument (perl's -l, -0).
	attached string
	// code are the options whose value is the program text (-c, -e): no
	// script runs, nothing to name.
	code string
	// module are the options whose value names what runs: python's -m,
	// java's -jar.
	module string
	// longCode are the long options whose value is the program text.
	longCode []string
	// longValued are the long options that take the next argument as
	// their value when written without "=".
	longValued []string
	// subcommand is a leading word naming a subcommand before the script
	// (deno run, bun run).
	subcommand string
	// plusOptions: "+o name" and the like are options too (shells).
	plusOptions bool
}

// interpreterOf returns the syntax of the interpreter called name, which
// may carry a version (python3.12, ruby3.2).
func interpreterOf(name string) (interpreterSyntax, bool) {
	switch strings.TrimRight(name, "0123456789.-") {
	case "python", "pypy":
		// CPython's getopt: -c cmd, -m mod, -W arg, -X opt; -- ends.
		return interpreterSyntax{valued: "WX", code: "c", module: "m",
			longValued: []string{"--check-hash-based-pycs"}}, true
	case "node", "nodejs":
		return interpreterSyntax{valued: "rC", code: "ep", longCode: []string{"--eval", "--print"},
			longValued: []string{"--require", "--import", "--loader", "--experimental-loader", "--conditions",
				"--title", "--env-file", "--input-type", "--inspect-port", "--redirect-warnings",
				"--openssl-config", "--icu-data-dir", "--dns-result-order", "--experimental-policy", "--report-dir"}}, true
	case "bun", "deno":
		return interpreterSyntax{valued: "rc", code: "e", longCode: []string{"--eval"}, subcommand: "run",
			longValued: []string{"--config", "--cwd", "--preload", "--import-map", "--env-file", "--location", "--seed", "--cert"}}, true
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash":
		// -c takes the command text from the first argument; -o and -O an
		// option name, also written +o.
		return interpreterSyntax{valued: "oO", code: "c", plusOptions: true,
			longValued: []string{"--rcfile", "--init-file"}}, true
	case "perl":
		// -e/-E program text; -I dir may stand apart; the others take
		// the rest of their cluster only.
		return interpreterSyntax{valued: "I", attached: "0CdDFilmMx", code: "eE"}, true
	case "ruby":
		return interpreterSyntax{valued: "ICEr", attached: "0FKTWx", code: "e",
			longValued: []string{"--encoding", "--external-encoding", "--internal-encoding"}}, true
	case "java":
		// java [options] -jar FILE or MAINCLASS; -cp and the module path
		// take the next argument.
		return interpreterSyntax{
			longValued: []string{"-cp", "-classpath", "--class-path", "-p", "--module-path", "--add-modules",
				"--upgrade-module-path", "--add-exports", "--add-opens", "--add-reads", "--patch-module",
				"--enable-native-access", "-splash", "--source"}}, true
	}
	return interpreterSyntax{}, false
}

// interpreted returns the base name of what interpreter name runs given
// its arguments args (argv[1:]): the script file's, or the module's for
// python -m and java -m/-jar. ok is false when name is no interpreter or
// nothing names what runs (program text given with -c or -e, a script
// read from stdin).
func interpreted(name string, args []string) (string, bool) {
	syn, ok := interpreterOf(name)
	if !ok {
		return "", false
	}
	if strings.TrimRight(name, "0123456789.-") == "java" {
		return javaMain(syn, args)
	}
	if syn.subcommand != "" && len(args) > 0 && args[0] == syn.subcommand {
		args = args[1:]
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return scriptName(args[i+1:])
		case a == "-":
			return "", false // the program is read from stdin
		case strings.HasPrefix(a, "--"):
			if slices.Contains(syn.longCode, strings.SplitN(a, "=", 2)[0]) {
				return "", false
			}
			if !strings.Contains(a, "=") && slices.Contains(syn.longValued, a) {
				i++
			}
			continue
		case syn.plusOptions && strings.HasPrefix(a, "+") && len(a) > 1:
			if strings.ContainsAny(a[1:], syn.valued) {
				i++ // +o pipefail
			}
			continue
		case !strings.HasPrefix(a, "-"):
			return path.Base(a), true
		}
		// A cluster of short options: -uB, -Wignore, -eo pipefail.
		cluster := a[1:]
	options:
		for j := 0; j < len(cluster); j++ {
			c := cluster[j]
			rest := cluster[j+1:]
			switch {
			case strings.IndexByte(syn.code, c) >= 0:
				return "", false
			case strings.IndexByte(syn.module, c) >= 0:
				if rest != "" {
					return rest, true
				}
				if i+1 < len(args) {
					return args[i+1], true
				}
				return "", false
			case strings.IndexByte(syn.valued, c) >= 0:
				if rest == "" {
					i++ // the value is the next argument
				}
			case strings.IndexByte(syn.attached, c) >= 0:
			default:
				continue // a flag without a value: the cluster goes on
			}
			break options // the rest of the cluster was the value
		}
	}
	return "", false
}

// javaMain is what java runs: the jar of -jar, the module of -m (its main
// class after a "/" left out), or the main class.
func javaMain(syn interpreterSyntax, args []string) (string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-jar" || a == "-m" || a == "--module") && i+1 < len(args):
			name, _, _ := strings.Cut(path.Base(args[i+1]), "/")
			if a != "-jar" {
				name, _, _ = strings.Cut(args[i+1], "/")
			}
			return name, true
		case slices.Contains(syn.longValued, a):
			i++
		case !strings.HasPrefix(a, "-"):
			return a, true
		}
	}
	return "", false
}

func scriptName(args []string) (string, bool) {
	if len(args) == 0 || args[0] == "-" {
		return "", false
	}
	return path.Base(args[0]), true
}
