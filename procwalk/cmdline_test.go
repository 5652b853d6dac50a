//go:build linux

package procwalk

import (
	"slices"
	"testing"
)

func TestParseCmdline(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty: kernel thread or zombie", "", nil},
		{"one arg", "bash\x00", []string{"bash"}},
		{"args", "python3\x00-m\x00http.server\x00", []string{"python3", "-m", "http.server"}},
		{"empty arg kept", "sh\x00-c\x00\x00", []string{"sh", "-c", ""}},
		{"no trailing NUL (truncated or rewritten)", "a\x00b", []string{"a", "b"}},
		// setproctitle rewrites argv into one space-separated string.
		{"rewritten", "sshd: dev@pts/3", []string{"sshd: dev@pts/3"}},
		{"lone NUL", "\x00", []string{""}},
		{"spaces and newlines inside args", "echo\x00a b\nc\x00", []string{"echo", "a b\nc"}},
	}
	for _, tt := range tests {
		if got := parseCmdline([]byte(tt.in)); !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
			t.Errorf("%s: parseCmdline(%q) = %q; want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

// A Scanner keeps the command lines it parsed: the next scan reading the
// same bytes gets the same strings, allocating nothing, as a slice no
// append can write through; what differs is parsed anew.
func TestScannerInternsCmdlines(t *testing.T) {
	fs, err := NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	sc := NewScanner(fs)
	first, err := sc.Snapshot(FieldCmdline)
	if err != nil {
		t.Fatal(err)
	}
	second, err := sc.Snapshot(FieldCmdline)
	if err != nil {
		t.Fatal(err)
	}
	a, b := first.Process(101), second.Process(101) // "-bash"
	c, d := first.Process(102), second.Process(102) // "-bash" too
	e, f := first.Process(120), second.Process(120) // python3 -m http.server
	if a == nil || b == nil || c == nil || d == nil || e == nil || f == nil {
		t.Fatal("fixture processes 101, 102 or 120 missing")
	}
	if !slices.Equal(f.Cmdline, []string{"python3", "-m", "http.server"}) || !slices.Equal(d.Cmdline, []string{"-bash"}) {
		t.Fatalf("cmdlines %q, %q", f.Cmdline, d.Cmdline)
	}
	if &a.Cmdline[0] != &b.Cmdline[0] || &a.Cmdline[0] != &d.Cmdline[0] || &e.Cmdline[0] != &f.Cmdline[0] {
		t.Error("a command line read again was parsed again")
	}
	if &a.Cmdline[0] == &e.Cmdline[0] {
		t.Error("two command lines share one slice")
	}
	if cap(f.Cmdline) != len(f.Cmdline) {
		t.Errorf("cap %d, len %d: an append would write into the shared slice", cap(f.Cmdline), len(f.Cmdline))
	}
}
