//go:build linux

package kill

import (
	"strings"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
)

// Each interpreter's options before the script, as its own parser reads
// them: a protected script must be found past them (issue 22, class 6).
func TestInterpreted(t *testing.T) {
	for _, tt := range []struct {
		cmdline string
		want    string // "" when nothing names what runs
	}{
		// python: flags, clusters, valued options apart or attached, -m, -c, --.
		{"python3 /usr/local/bin/jupyter-lab", "jupyter-lab"},
		{"python3 -u /usr/local/bin/jupyter-lab --no-browser", "jupyter-lab"},
		{"python3 -B /usr/local/bin/jupyter-server", "jupyter-server"},
		{"python3.12 -uBE -s /opt/jupyter-lab", "jupyter-lab"},
		{"python3 -W ignore -X dev /opt/jupyter-lab", "jupyter-lab"},
		{"python3 -Wignore -Xfrozen_modules=off /opt/jupyter-lab", "jupyter-lab"},
		{"python3 -X importtime -W error::DeprecationWarning -OO /opt/jupyter-server", "jupyter-server"},
		{"python3 --check-hash-based-pycs never /opt/jupyter-lab", "jupyter-lab"},
		{"python3 -m jupyterlab --port 8888", "jupyterlab"},
		{"python3 -u -m jupyter_server", "jupyter_server"},
		{"python3 -mhttp.server", "http.server"},
		{"python3 -um jupyterlab", "jupyterlab"},
		{"python3 -c import time; time.sleep(9) /opt/jupyter-lab", ""},
		{"python3 -uc pass /opt/jupyter-lab", ""},
		{"python3 -- /opt/jupyter-lab", "jupyter-lab"},
		{"python3 - /opt/jupyter-lab", ""},
		{"pypy3 -u /opt/jupyter-lab", "jupyter-lab"},
		// node, bun, deno.
		{"node /usr/lib/code-server", "code-server"},
		{"node --max-old-space-size=4096 --inspect /usr/lib/code-server", "code-server"},
		{"node -r ts-node/register --title x /usr/lib/code-server", "code-server"},
		{"node --require=dotenv/config --enable-source-maps /usr/lib/code-server", "code-server"},
		{"node --import tsx /srv/code-server", "code-server"},
		{"node -e require('x') /usr/lib/code-server", ""},
		{"node --eval=1 /usr/lib/code-server", ""},
		{"node --print 1 /usr/lib/code-server", ""},
		{"nodejs -- /usr/lib/code-server", "code-server"},
		{"bun run --smol /srv/code-server", "code-server"},
		{"deno run -A --config deno.json /srv/code-server", "code-server"},
		// shells.
		{"bash -e /usr/local/bin/ttyd", "ttyd"},
		{"bash -ex -o pipefail /usr/local/bin/ttyd -p 7681", "ttyd"},
		{"bash -eo pipefail /usr/local/bin/ttyd", "ttyd"},
		{"bash +o history -O extglob --norc --rcfile /etc/x /usr/local/bin/ttyd", "ttyd"},
		{"sh -e /usr/local/bin/ttyd", "ttyd"},
		{"dash -eu /usr/local/bin/ttyd", "ttyd"},
		{"zsh -f /usr/local/bin/ttyd", "ttyd"},
		{"bash -c exec ttyd ttyd", ""},
		{"bash -lc /usr/local/bin/ttyd", ""},
		{"bash -s /usr/local/bin/ttyd", "ttyd"}, // -s reads stdin; what follows are its arguments, a name worth matching
		// perl, ruby.
		{"perl -w /usr/local/bin/sshd", "sshd"},
		{"perl -wT -I /usr/lib/perl5 -Mstrict -l -0777 /opt/envoy", "envoy"},
		{"perl -Ilib -d:Trace -x /opt/envoy", "envoy"},
		{"perl -e print 1 /opt/envoy", ""},
		{"perl -- /opt/envoy", "envoy"},
		{"ruby -w /opt/envoy", "envoy"},
		{"ruby -W0 -r json -I lib -C /tmp -E UTF-8 /opt/envoy", "envoy"},
		{"ruby3.2 --disable=gems --yjit /opt/envoy", "envoy"},
		{"ruby -e puts 1 /opt/envoy", ""},
		// java.
		{"java -Xmx2g -cp /opt/lib/* -Dx=y org.example.Main", "org.example.Main"},
		{"java -jar /opt/kubelet.jar", "kubelet.jar"},
		{"java --module-path mods -m envoy/org.Main", "envoy"},
		// not interpreters.
		{"make -j2 /opt/jupyter-lab", ""},
	} {
		args := strings.Fields(tt.cmdline)
		if strings.Contains(tt.cmdline, "import time") || strings.Contains(tt.cmdline, "require('x')") ||
			strings.Contains(tt.cmdline, "exec ttyd") || strings.Contains(tt.cmdline, "print 1") || strings.Contains(tt.cmdline, "puts 1") {
			args = codeArgs(tt.cmdline)
		}
		got, ok := interpreted(args[0], args[1:])
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("%q: got %q, %v; want %q", tt.cmdline, got, ok, tt.want)
		}
	}
}

// codeArgs splits a command line whose program text (after -c or -e) is
// one argument with spaces: the text runs up to the last argument.
func codeArgs(cmdline string) []string {
	f := strings.Fields(cmdline)
	for i, a := range f {
		if a == "-c" || a == "-e" || a == "-uc" || a == "-lc" || a == "--print" {
			return append(append(f[:i+1:i+1], strings.Join(f[i+1:len(f)-1], " ")), f[len(f)-1])
		}
	}
	return f
}

// The protected list applies past the options: a plain kill of these is
// refused, and a script that merely takes a protected name as an argument
// is not protected by it.
func TestProtectedPastInterpreterOptions(t *testing.T) {
	for _, tt := range []struct {
		comm    string
		cmdline []string
		pattern string
	}{
		{"python3", []string{"/usr/bin/python3", "-u", "/usr/local/bin/jupyter-lab"}, "jupyter-lab"},
		{"python3", []string{"python3", "-B", "/usr/local/bin/jupyter-server"}, "jupyter-server"},
		{"python3", []string{"python3", "-m", "jupyterlab"}, "jupyterlab"},
		{"python3", []string{"python3", "-m", "jupyter_server"}, "jupyter_server"},
		{"bash", []string{"/bin/bash", "-e", "/usr/local/bin/ttyd"}, "ttyd"},
		{"node", []string{"node", "--inspect", "/usr/lib/code-server"}, "code-server"},
		{"perl", []string{"perl", "-w", "/usr/sbin/sshd"}, "sshd"},
		{"ruby", []string{"ruby", "-W0", "/usr/local/bin/envoy"}, "envoy"},
	} {
		p := &procwalk.Process{ID: procwalk.ProcID{PID: 42}, Comm: tt.comm, Cmdline: tt.cmdline}
		if got := matchProtected(p, DefaultProtected()); got != tt.pattern {
			t.Errorf("%v: protected by %q, want %q", tt.cmdline, got, tt.pattern)
		}
	}
	for _, cmdline := range [][]string{
		{"python3", "/home/me/train.py", "/usr/local/bin/jupyter-lab"},
		{"python3", "-c", "import os", "jupyter-lab"},
		{"bash", "-c", "sleep 1", "ttyd"},
		{"python3", "-m", "pytest", "jupyter-lab"},
	} {
		p := &procwalk.Process{ID: procwalk.ProcID{PID: 42}, Comm: "python3", Cmdline: cmdline}
		if got := matchProtected(p, DefaultProtected()); got != "" {
			t.Errorf("%v: protected by %q, want not protected", cmdline, got)
		}
	}
}
