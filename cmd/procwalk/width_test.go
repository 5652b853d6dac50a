//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/textwidth"
)

// cliColumns runs the command as cliAt does, with $COLUMNS set to columns.
func cliColumns(t *testing.T, columns int, now time.Time, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, clock: utcClock{procwalk.NewOffsetClock(now)}, columns: columns}
	err := runEnv(context.Background(), e, args)
	return result{stdout.String(), stderr.String(), exitCode(err)}
}

// The default sessions view, ps and tree fit 80 and 120 columns on the
// fixtures: columns drop by priority, long names are cut in the middle,
// the last column takes the rest and ends in "…" where it is cut. The
// clock starts 30 days 45 minutes after the fixture's boot, so AGE is the
// same whatever today's date: its processes started 0 to 67 minutes after
// boot, every age at least 5 minutes from the next whole hour.
func TestFitsWidth(t *testing.T) {
	clearEnv(t)
	needPages4K(t)
	now := fixtureBoot().Add(30*24*time.Hour + 45*time.Minute)
	// UPDATE_GOLDEN=1 go test ./cmd/procwalk -run TestFitsWidth rewrites
	// the golden files: read the diff before committing it.
	update := os.Getenv("UPDATE_GOLDEN") == "1"
	views := map[string][]string{
		"sessions": sessionsFixture("sessions", "--no-rates"),
		"ps":       fixture("ps", "--interval", "1ms"),
		"tree":     fixture("tree"),
	}
	for name, args := range views {
		for _, columns := range []int{80, 120} {
			r := cliColumns(t, columns, now, args...)
			if r.code != exitOK {
				t.Fatalf("%s at %d columns: exit %d: %s", name, columns, r.code, r.stderr)
			}
			for _, l := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
				if n := textwidth.Width(l); n > columns {
					t.Errorf("%s at %d columns: a line of %d cells: %q", name, columns, n, l)
				}
			}
			golden := filepath.Join("testdata", name+"-"+strconv.Itoa(columns)+".golden")
			if update {
				if err := os.WriteFile(golden, []byte(r.stdout), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if r.stdout != string(want) {
				t.Errorf("%s at %d columns: got\n%s\nwant (%s)\n%s", name, columns, r.stdout, golden, want)
			}
		}
	}
}

// Without COLUMNS a pipe or a file gets whole lines; --wide wins over
// COLUMNS.
func TestWidthUnlimited(t *testing.T) {
	clearEnv(t)
	now := fixtureBoot().Add(30*24*time.Hour + 45*time.Minute)
	args := sessionsFixture("sessions", "--no-rates")
	whole := cliColumns(t, 0, now, args...)
	if !strings.Contains(whole.stdout, "docker-d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4.scope") || strings.Contains(whole.stdout, "…") {
		t.Errorf("no COLUMNS, no terminal: cut lines\n%s", whole.stdout)
	}
	if wide := cliColumns(t, 80, now, append(args, "--wide")...); wide.stdout != whole.stdout {
		t.Errorf("--wide with COLUMNS=80 differs from whole lines:\n%s", wide.stdout)
	}
}

func TestCutCells(t *testing.T) {
	tests := []struct {
		in       string
		n        int
		end, mid string
	}{
		{"abcdef", 6, "abcdef", "abcdef"},
		{"abcdefgh", 6, "abcde…", "abc…gh"},
		{"/user.slice/user-1000.slice/foo.service", 15, "/user.slice/us…", "/user.s…service"},
		{"ab", 1, "…", "…"},
		{"héllo wörld", 5, "héll…", "hé…ld"},
	}
	for _, tt := range tests {
		if got := render.CutEnd(tt.in, tt.n); got != tt.end {
			t.Errorf("render.CutEnd(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.end)
		}
		if got := render.CutMiddle(tt.in, tt.n); got != tt.mid {
			t.Errorf("render.CutMiddle(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.mid)
		}
	}
	if got := render.ColumnsFromEnv(" 80 "); got != 80 {
		t.Errorf("COLUMNS=' 80 ': %d", got)
	}
	for _, bad := range []string{"", "0", "-5", "wide"} {
		if got := render.ColumnsFromEnv(bad); got != 0 {
			t.Errorf("COLUMNS=%q: %d, want 0 (not set)", bad, got)
		}
	}
}

// session's summary and attributes wrap their values under themselves at
// the width, never cutting them (a word longer than the room, such as a
// container id, stays whole on a line of its own); its PANES and MEMBERS
// At 80 columns the sessions view cuts the fixture's two foo.service
// cgroups (user-1000's and user-1001's, alike in their first 20 and last
// 31 runes) so that they still read apart: as many NAMEs as --wide shows.
func TestSessionNamesApartAt80(t *testing.T) {
	clearEnv(t)
	now := fixtureBoot().Add(30*24*time.Hour + 45*time.Minute)
	args := sessionsFixture("sessions", "--no-rates")
	names := func(out string) map[string]bool {
		set := map[string]bool{}
		for _, l := range strings.Split(out, "\n")[1:] {
			if f := strings.Fields(l); len(f) > 1 && f[0] != "..." {
				set[f[0]+" "+f[1]] = true
			}
		}
		return set
	}
	cut, whole := cliColumns(t, 80, now, args...), cliColumns(t, 80, now, append(args, "--wide")...)
	if cut.code != exitOK || whole.code != exitOK {
		t.Fatalf("exit %d, %d: %s%s", cut.code, whole.code, cut.stderr, whole.stderr)
	}
	if got, want := len(names(cut.stdout)), len(names(whole.stdout)); got != want || !strings.Contains(whole.stdout, "user-1001.slice/user@1001.service/app.slice/foo.service") {
		t.Errorf("%d different KIND NAME at 80 columns, %d with --wide:\n%s", got, want, cut.stdout)
	}
}

// A CJK session name lines up and fits by the cells it takes: before, the
// table counted runes, and a row with a wide name ran 83 cells at
// COLUMNS=80 with every column after the name shifted.
func TestWideNamesFitWidth(t *testing.T) {
	clearEnv(t)
	now := fixtureBoot().Add(30*24*time.Hour + 45*time.Minute)
	r := cliColumns(t, 80, now, sessionsFixture("sessions", "--no-rates", "--kind", "tree,agent",
		"--tree", "日本語のとても長いセッションの名前です=1", "--tree", "エージェント=101")...)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	header := lines[0]
	end := textwidth.Width(header[:strings.Index(header, "PROCS")+len("PROCS")])
	for _, l := range lines[1:] {
		if n := textwidth.Width(l); n > 80 {
			t.Errorf("a line of %d cells: %q", n, l)
		}
		f := strings.Fields(l)
		procs := f[slices.IndexFunc(f, func(s string) bool { _, err := strconv.Atoi(s); return err == nil })]
		at := strings.Index(l, " "+procs+"  ") + 1 + len(procs)
		if got := textwidth.Width(l[:at]); got != end {
			t.Errorf("PROCS ends at cell %d, the heading at %d: %q", got, end, l)
		}
	}
	if !strings.Contains(r.stdout, "日本語の…名前です") || !strings.Contains(r.stdout, "エージェント ") {
		t.Errorf("the wide names are not cut by cells:\n%s", r.stdout)
	}
}

// run --list and run --api fit the terminal, descriptions wrapped at
// spaces, and keep one line each for a pipe (the terminal broke their
// words at 80 columns).
func TestRunListingsFitWidth(t *testing.T) {
	clearEnv(t)
	for _, args := range [][]string{{"run", "--list"}, {"run", "--api"}} {
		fitted := cliColumns(t, 80, time.Now(), args...)
		whole := cliColumns(t, 0, time.Now(), args...)
		if fitted.code != exitOK || whole.code != exitOK {
			t.Fatalf("%q: exit %d/%d: %s%s", args, fitted.code, whole.code, fitted.stderr, whole.stderr)
		}
		for _, l := range strings.Split(fitted.stdout, "\n") {
			if n := textwidth.Width(l); n > 80 {
				t.Errorf("%q at 80 columns: a line of %d cells: %q", args, n, l)
			}
		}
		if strings.Join(strings.Fields(fitted.stdout), " ") != strings.Join(strings.Fields(whole.stdout), " ") {
			t.Errorf("%q: the words at 80 columns differ from the whole lines:\n%s\n----\n%s", args, fitted.stdout, whole.stdout)
		}
		if !strings.Contains(whole.stdout, "memory-guard    kill the biggest process of a tmux or agent session whose memory stays over a limit for N ticks\n") &&
			!strings.Contains(whole.stdout, "  pw.log(...)                                                  an info log record: the arguments joined by spaces\n") {
			t.Errorf("%q without a width: not one line a description:\n%s", args, whole.stdout)
		}
	}
}
