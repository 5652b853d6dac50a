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

// AppendPrintable is Printable, cut at a byte limit between characters and
// escapes; NeedsEscape says when Printable changes a string.
func TestAppendPrintable(t *testing.T) {
	for _, tt := range []struct {
		in   string
		max  int
		want string
	}{
		{"evil\x1b[31m", -1, `evil\x1b[31m`},
		{"evil\x1b[31m", 6, `evil`}, // not half of \x1b
		{"ab→c", 4, "ab"},           // not half of →
		{"ab→c", 5, "ab→"},
		{"a\nb", 3, `a\n`},
		{"\xffx", 4, `\xff`},
	} {
		if got := string(AppendPrintable(nil, tt.in, tt.max)); got != tt.want {
			t.Errorf("AppendPrintable(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
	for _, s := range []string{"bash", "naïve ✓", "\uFFFD", "a\nb", "bad\xff", "bidi\u202e", "日本語", ""} {
		if got, want := NeedsEscape(s), Printable(s) != s; got != want {
			t.Errorf("NeedsEscape(%q) = %v, Printable changes it: %v", s, got, want)
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

// AppendData escapes what Printable escapes but valid characters, which it
// keeps: line protocol is data, no terminal.
func TestAppendData(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"evil\x1b[31m\n", `evil\x1b[31m\n`},
		{"bad\xff", `bad\xff`},
		{"bom\ufeff zw\u200b bidi\u202e", "bom\ufeff zw\u200b bidi\u202e"},
		{"c1\u0085", `c1\u0085`},
	} {
		if got := string(AppendData(nil, tt.in, -1)); got != tt.want {
			t.Errorf("AppendData(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got, want := NeedsDataEscape(tt.in), tt.want != tt.in; got != want {
			t.Errorf("NeedsDataEscape(%q) = %v, want %v", tt.in, got, want)
		}
	}
}
