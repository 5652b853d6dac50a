//go:build linux

package render

import (
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/procwalk/procwalk/procwalk/metric"
)

func TestFormatRate(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0 B"},
		{1048576, "1.0 MiB"},
		{511.6, "512 B"},
		{-1, "-"},
		{math.NaN(), "-"},
		{math.Inf(1), "16.0 EiB"},
		{1e30, "16.0 EiB"},
	}
	for _, tt := range tests {
		if got := Rate(tt.in); got != tt.want {
			t.Errorf("Rate(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{-time.Second, "0s"},
		{0, "0s"},
		{42*time.Second + 900*time.Millisecond, "42s"},
		{5*time.Minute + 12*time.Second, "5m12s"},
		{2*time.Hour + 5*time.Minute + 59*time.Second, "2h05m"},
		{3*24*time.Hour + 4*time.Hour, "3d04h"},
		{412 * 24 * time.Hour, "412d"},
	}
	for _, tt := range tests {
		if got := Duration(tt.in); got != tt.want {
			t.Errorf("Duration(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
	seconds := []struct {
		in   float64
		want string
	}{
		{0, "0.00s"},
		{12.345, "12.35s"},
		{59.99, "59.99s"},
		{73, "1m13s"},
		{1030.86, "17m10s"},
	}
	for _, tt := range seconds {
		if got := Seconds(tt.in); got != tt.want {
			t.Errorf("Seconds(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTableWrite(t *testing.T) {
	tb := &Table{Cols: []Column{{Header: "PID", Right: true}, {Header: "USER"}, {Header: "COMMAND"}}}
	tb.Add("1", "root", "/sbin/init splash")
	tb.Add("12345", "dev", "naïve ✓ command")
	var b strings.Builder
	if err := tb.Write(&b, 0); err != nil {
		t.Fatal(err)
	}
	want := `  PID  USER  COMMAND
    1  root  /sbin/init splash
12345  dev   naïve ✓ command
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}

	// Cut to 20 columns: 13 go to PID and USER, the last column keeps 7
	// runes, the last of them "…" where a cell was cut.
	b.Reset()
	if err := tb.Write(&b, 20); err != nil {
		t.Fatal(err)
	}
	want = `  PID  USER  COMMAND
    1  root  /sbin/…
12345  dev   naïve …
`
	if b.String() != want {
		t.Errorf("cut to 20:\n%s\nwant:\n%s", b.String(), want)
	}

	// USER may go to fit COMMAND's 10 runes: then COMMAND gets the 13 left.
	tb.Cols[1].Drop, tb.Cols[2].Min = 1, 10
	b.Reset()
	if err := tb.Write(&b, 20); err != nil {
		t.Fatal(err)
	}
	want = `  PID  COMMAND
    1  /sbin/init s…
12345  naïve ✓ comm…
`
	if b.String() != want {
		t.Errorf("USER dropped at 20:\n%s\nwant:\n%s", b.String(), want)
	}
}

// A live table (the live view's): columns of fixed widths a blank apart,
// laid out a line at a time. A column with a negative rank goes before the
// others, a number too wide for its column loses its decimals, a name is
// cut in the middle (two long names apart), the last column takes what is
// left, and ColumnAt finds a column by the cell under x.
func TestLayoutFixedWidths(t *testing.T) {
	tb := &Table{Gap: 1, Cols: []Column{{Header: "PID", Width: 5, Right: true, Drop: 10}, {Header: "NAME", Width: 9, Drop: 9},
		{Header: "PSS", Width: 8, Right: true, Drop: 5}, {Header: "READ/s", Width: 7, Right: true, Drop: -1}, {Header: "COMMAND", Width: 6}}}
	tb.Add("1", "systemd-journald", "234.0 MiB+", "-", "/usr/lib/systemd/systemd-journald")
	tb.Add("22", "systemd-resolvnald", "1.0 MiB", "-", "sleep")
	l := tb.Layout(38)
	var got []string
	for _, row := range append([][]string{{"PID", "NAME", "PSS", "READ/s", "COMMAND"}}, tb.Rows...) {
		got = append(got, string(l.AppendLine(nil, row)))
	}
	// 5+1 + 9+1 + 8+1 + 7+1 + 6 = 39 cells: READ/s (rank -1) goes
	// first, and COMMAND takes the 13 left.
	want := []string{
		"  PID NAME           PSS COMMAND",
		"    1 sys…rnald 234 MiB+ /usr/lib/sys…", // "syst…nald" both: kept apart
		"   22 sys…vnald  1.0 MiB sleep",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if l.Width(3) != 0 || l.Width(4) != 13 {
		t.Errorf("READ/s %d wide, COMMAND %d: want 0 and 13", l.Width(3), l.Width(4))
	}
	for x, c := range map[int]int{0: 0, 5: 0, 6: 1, 15: 1, 16: 2, 24: 2, 25: 4, 37: 4, -1: -1} {
		if got := l.ColumnAt(x); got != c {
			t.Errorf("ColumnAt(%d) = %d, want %d", x, got, c)
		}
	}
	// A CutEnd column is cut at its end, as the last one is.
	tb = &Table{Gap: 1, Cols: []Column{{Header: "MODEL", Width: 8, CutEnd: true}, {Header: "X"}}}
	if got := string(tb.Layout(20).AppendLine(nil, []string{"claude-sonnet-4-5", "x"})); got != "claude-… x" {
		t.Errorf("CutEnd: %q, want %q", got, "claude-… x")
	}
}

// A strings.Builder is no terminal: output is never cut.
func TestTerminalWidthOfAPipe(t *testing.T) {
	if w := TerminalWidth(&strings.Builder{}); w != 0 {
		t.Errorf("TerminalWidth(Builder) = %d, want 0", w)
	}
}

// TestFormatMetricWholeNumbers checks that the integer path of a unitless
// metric prints what FormatFloat prints, at the edges of that path too.
func TestFormatMetricWholeNumbers(t *testing.T) {
	d := &metric.Desc{Name: "pid"}
	for _, v := range []float64{0, math.Copysign(0, -1), 1, -1, 42, 123456, -98765, 1<<53 - 1, -(1<<53 - 1), 1 << 53, 1 << 60, 1e21, 1.5, -0.25, math.Inf(1), math.NaN()} {
		if got, want := Metric(d, v), strconv.FormatFloat(v, 'f', -1, 64); got != want {
			t.Errorf("Metric(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestWhole(t *testing.T) {
	for in, want := range map[string]string{
		"234.0 MiB+":  "234 MiB+",
		"1000.0 KiB+": "1000 KiB+",
		"+1023.9 MiB": "+1023 MiB",
		"-12.5 KiB":   "-12 KiB",
		"1234.5":      "1234",
		"512 B":       "512 B",
		"-":           "-",
		"21m06s":      "21m06s",
		".5":          ".5",
	} {
		if got := Whole(in); got != want {
			t.Errorf("Whole(%q) = %q, want %q", in, got, want)
		}
	}
}

// Lines are cut to nothing with wide, to $COLUMNS when set (a pipe too),
// else to a terminal's width, else not at all.
func TestOutputWidth(t *testing.T) {
	var pipe strings.Builder
	for _, tt := range []struct {
		columns int
		wide    bool
		want    int
	}{{0, false, 0}, {80, false, 80}, {80, true, 0}} {
		if got := OutputWidth(&pipe, tt.columns, tt.wide); got != tt.want {
			t.Errorf("a pipe, COLUMNS %d, wide %v: %d, want %d", tt.columns, tt.wide, got, tt.want)
		}
	}
	// A terminal 123 columns wide: a pty of our own.
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("no pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	tty, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer tty.Close()
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 123}); err != nil {
		t.Fatal(err)
	}
	if got := OutputWidth(tty, 0, false); got != 123 {
		t.Errorf("a terminal of 123 columns: %d", got)
	}
	if got := OutputWidth(tty, 80, false); got != 80 {
		t.Errorf("a terminal, COLUMNS 80: %d, want 80", got)
	}
	if got := OutputWidth(tty, 0, true); got != 0 {
		t.Errorf("a terminal, wide: %d, want 0", got)
	}
}
