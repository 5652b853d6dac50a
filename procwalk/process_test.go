//go:build linux

package procwalk

import "testing"

func TestProcessName(t *testing.T) {
	tests := []struct {
		comm    string
		cmdline []string
		want    string
	}{
		{"bash", []string{"/bin/bash", "-l"}, "bash"},
		{"cc1", []string{"cc1"}, "cc1"},
		{"python3", []string{"/usr/bin/python3.11"}, "python3.11"},
		{"kthreadd", nil, "kthreadd"},                           // kernel thread: no cmdline
		{"defunct", []string{""}, "defunct"},                    // cleared argv
		{"sshd", []string{"sshd: dev@pts/3"}, "sshd"},           // a title, not a path
		{"nginx", []string{"nginx: worker process"}, "nginx"},   // ditto
		{"tmux: server", []string{"tmux", "-L", "x"}, "tmux"},   // comm is the title here
		{"node", []string{"/opt/app/bin/"}, "bin"},              // trailing slash
		{"my prog", []string{"./my prog", "--flag"}, "my prog"}, // a space: the comm, which agrees
	}
	for _, tt := range tests {
		p := &Process{Comm: tt.comm, Cmdline: tt.cmdline}
		if got := p.Name(); got != tt.want {
			t.Errorf("Name() of comm %q, cmdline %q = %q; want %q", tt.comm, tt.cmdline, got, tt.want)
		}
	}
}
