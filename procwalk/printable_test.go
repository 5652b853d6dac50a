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

func TestPrintableLen(t *testing.T) {
	for _, s := range []string{"", "plain", "evil\nname\t", "\x1b[31m", "bad \xff\xfe", "bom\ufeff zw\u200b", "\U0001F600 emoji", "é ü 日本", "\x7f\u0085\U000E0001"} {
		if got, want := PrintableLen(s), len(Printable(s)); got != want {
			t.Errorf("PrintableLen(%q) = %d, want %d (%q)", s, got, want, Printable(s))
		}
	}
}
