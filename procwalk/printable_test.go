//go:build linux

package procwalk

import "testing"

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"bash", "bash"},
		{"tmux: server", "tmux: server"},
		{"evil\nname", `evil\nname`},
		{"tab\there", `tab\there`},
		{"a\tb\x1b[31mc", `a\tb\x1b[31mc`},
		{"bell\x07", `bell\x07`},
		{"del\x7f", `del\x7f`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"naïve ✓", "naïve ✓"},
		{"bidi\u202eevil", `bidi\u202eevil`},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Printable(tt.in); got != tt.want {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
