//go:build linux

package kill_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
)

// A writer that is no file gets a pipe whose copy ends when the command
// does; a file, also under the line cap, is handed over as it is.
func TestStdio(t *testing.T) {
	var out bytes.Buffer
	errFile, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	stdio, err := kill.NewStdio(strings.NewReader("not a file"), &out, procwalk.CapLines(errFile))
	if err != nil {
		t.Fatal(err)
	}
	if stdio.Stdin != nil || stdio.Stderr != errFile || stdio.Stdout == nil {
		t.Fatalf("stdin %v, stdout %v, stderr %v; want nil, a pipe, the file", stdio.Stdin, stdio.Stdout, stdio.Stderr)
	}
	cmd := exec.Command("sh", "-c", "echo out; echo err >&2")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdio.Started()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if !stdio.Wait(time.Minute) { // returns when the copy ends, at the command's exit
		t.Fatal("the output copy did not end within a minute of the command's exit")
	}
	if out.String() != "out\n" {
		t.Errorf("stdout %q; want %q", out.String(), "out\n")
	}
	if b, _ := os.ReadFile(errFile.Name()); string(b) != "err\n" {
		t.Errorf("stderr %q; want %q", b, "err\n")
	}
}

func TestExitStatus(t *testing.T) {
	for _, tt := range []struct {
		script string
		want   int
	}{
		{"exit 0", 0},
		{"exit 3", 3},
		{"kill -TERM $$", 128 + int(syscall.SIGTERM)},
	} {
		cmd := exec.Command("sh", "-c", tt.script)
		cmd.Run()
		ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if got := kill.ExitStatus(unix.WaitStatus(ws)); got != tt.want {
			t.Errorf("%s: %d; want %d", tt.script, got, tt.want)
		}
	}
}

// No terminal, no foreground.
func TestForegroundWithoutTerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if kill.Foreground(f) || kill.Foreground(strings.NewReader("")) || kill.Foreground((*os.File)(nil)) {
		t.Error("no terminal, yet foreground")
	}
}

// A supervisor's exit: ExitLimit for an enforced limit, else the
// command's; none when a broken limit could not be enforced (never 124:
// nothing was stopped) or the command was never reaped.
func TestSuperviseResultExitCode(t *testing.T) {
	exited3, killed := unix.WaitStatus(3<<8), unix.WaitStatus(syscall.SIGKILL)
	refused := fmt.Errorf("pid 9 (sh): %w", kill.ErrProtected)
	for _, tt := range []struct {
		name string
		r    kill.SuperviseResult
		code int
		err  error // wrapped; errNone: an error without one
	}{
		{"its own exit", kill.SuperviseResult{Status: &exited3}, 3, nil},
		{"killed by a signal", kill.SuperviseResult{Status: &killed}, 128 + 9, nil},
		{"enforced", kill.SuperviseResult{Status: &killed, Enforced: "--timeout 1s reached"}, kill.ExitLimit, nil},
		{"unenforced", kill.SuperviseResult{Status: &exited3, Enforced: "--timeout 1s reached", Unenforced: refused}, 0, kill.ErrProtected},
		{"never reaped", kill.SuperviseResult{}, 0, errNone},
	} {
		code, err := tt.r.ExitCode()
		if code != tt.code || (tt.err == nil) != (err == nil) || tt.err != nil && tt.err != errNone && !errors.Is(err, tt.err) {
			t.Errorf("%s: %d, %v; want %d, %v", tt.name, code, err, tt.code, tt.err)
		}
	}
}

// errNone stands for an error that wraps no other.
var errNone = errors.New("any error")
