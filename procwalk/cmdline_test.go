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
