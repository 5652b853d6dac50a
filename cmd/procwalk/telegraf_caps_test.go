//go:build linux

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
	"github.com/procwalk/procwalk/plugin"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/bpfsource"
	"golang.org/x/sys/unix"
)

// nobodyID is the uid and gid an unprivileged Telegraf stands for here:
// nobody/nogroup, which every Linux has, so no user is created.
const nobodyID = 65534

// Capability numbers (include/uapi/linux/capability.h).
const (
	capPerfmonBit = 38
	capBPFBit     = 39
)

// TestIntegrationTelegrafExecdUnprivileged runs telegraf --execd as an
// unprivileged Telegraf would (uid and gid 65534, no groups), through
// setpriv: with ambient CAP_BPF and CAP_PERFMON, what the README's systemd
// drop-in (AmbientCapabilities=CAP_BPF CAP_PERFMON) gives it, auto takes the
// BPF source; with none, or CAP_BPF alone, it reads /proc and its self line
// says which privilege is missing. Each exits 0 when its stdin closes.
func TestIntegrationTelegrafExecdUnprivileged(t *testing.T) {
	integration(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: it runs procwalk as uid 65534 with capabilities it chooses")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skipf("needs setpriv (util-linux) to drop to uid %d with ambient capabilities: %v", nobodyID, err)
	}
	if !permits(t, capBPFBit) || !permits(t, capPerfmonBit) {
		t.Skip("this root lacks CAP_BPF or CAP_PERFMON in its permitted set (a container's bounding set?): it cannot pass them on")
	}
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	if err := bpfsource.Allowed(fs); err != nil {
		t.Skipf("the BPF source cannot run on this host: %v", err)
	}
	src, err := bpfsource.Open(fs)
	if err != nil {
		t.Skipf("the BPF source does not load on this host even as root: %v", err)
	}
	src.Close()
	bin := nobodyBinary(t, buildProcwalk(t))

	const denied = "auto: bpf needs root (CAP_SYS_ADMIN) or CAP_BPF and CAP_PERFMON"
	for _, c := range []struct {
		name   string
		caps   string // for --inh-caps and --ambient-caps; "" for none
		capEff uint64 // the effective set procwalk must run with
		source string
		note   string // source_note, or its start for bpf (it may add a count)
	}{
		{"CAP_BPF and CAP_PERFMON", "+bpf,+perfmon", 1<<capBPFBit | 1<<capPerfmonBit, "bpf", "auto: privileges, BTF and kernel allow bpf"},
		{"no capabilities", "", 0, "proc", denied},
		{"CAP_BPF alone", "+bpf", 1 << capBPFBit, "proc", denied},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{fmt.Sprintf("--reuid=%d", nobodyID), fmt.Sprintf("--regid=%d", nobodyID), "--clear-groups"}
			if c.caps != "" {
				args = append(args, "--inh-caps="+c.caps, "--ambient-caps="+c.caps)
			}
			cmd := exec.Command(setpriv, append(args, bin, "telegraf", "--execd")...)
			cmd.Dir = filepath.Dir(bin)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() {
				cmd.Process.Kill() // ours: setpriv execs procwalk in its place
				<-done
			})

			io.WriteString(stdin, "\n")
			lines := make(chan string, 1)
			go func() {
				out := bufio.NewReader(stdout)
				for {
					line, err := out.ReadString('\n')
					if err != nil {
						close(lines)
						io.Copy(io.Discard, out)
						return
					}
					if strings.HasPrefix(line, plugin.MeasurementSelf+",schema=procwalk ") {
						lines <- line
						io.Copy(io.Discard, out)
						return
					}
				}
			}()
			var self string
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("stdout ended before the self line (stderr %q)", &stderr)
				}
				self = line
			case <-time.After(60 * time.Second):
				t.Fatalf("no self line within 60 s (stderr %q)", &stderr)
			}

			// procwalk runs as the test says: uid 65534, these capabilities.
			if uid, capEff := uidCaps(t, cmd.Process.Pid); uid != nobodyID || capEff != c.capEff {
				t.Errorf("procwalk runs as uid %d with CapEff %#x, want uid %d with %#x", uid, capEff, nobodyID, c.capEff)
			}

			source, note := selfSource(t, self)
			if source != c.source || !strings.HasPrefix(note, c.note) || c.source == "proc" && note != c.note {
				t.Errorf("self line: source %q, source_note %q; want source %q, note %q", source, note, c.source, c.note)
			}

			stdin.Close()
			select {
			case err := <-done:
				done <- err // for the cleanup
				if err != nil {
					t.Errorf("after stdin EOF: %v (stderr %q), want exit 0", err, &stderr)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("procwalk telegraf --execd did not exit within 30 s of stdin EOF (stderr %q)", &stderr)
			}
			if strings.Contains(stderr.String(), "E! ") {
				t.Errorf("stderr %q, want no E! line", &stderr)
			}
		})
	}
}

// permits reports whether this process's permitted set holds capability c.
func permits(t *testing.T, c uint) bool {
	t.Helper()
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		t.Fatalf("capget: %v", err)
	}
	return data[c/32].Permitted&(1<<(c%32)) != 0
}

// uidCaps returns the real uid and the effective capabilities of pid, from
// its /proc status ("Uid:\treal\teffective...", "CapEff:\t<hex>").
func uidCaps(t *testing.T, pid int) (uid int, capEff uint64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	uid = -1
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		f := strings.Fields(v)
		switch {
		case k == "Uid" && len(f) > 0:
			uid, err = strconv.Atoi(f[0])
		case k == "CapEff" && len(f) > 0:
			capEff, err = strconv.ParseUint(f[0], 16, 64)
		}
		if err != nil {
			t.Fatalf("pid %d status line %q: %v", pid, line, err)
		}
	}
	return uid, capEff
}

// nobodyBinary copies bin where uid 65534 can run it: t.TempDir() is
// root's alone (0700), so a directory of its own, 0755.
func nobodyBinary(t *testing.T, bin string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "procwalk-caps-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(dir, "procwalk")
	if err := os.WriteFile(copied, b, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, copied} {
		if err := os.Chmod(p, 0o755); err != nil { // whatever the umask
			t.Fatal(err)
		}
	}
	return copied
}

// selfSource returns the source and source_note fields of a self line.
func selfSource(t *testing.T, line string) (source, note string) {
	t.Helper()
	dec := lineprotocol.NewDecoderWithBytes([]byte(line))
	if !dec.Next() {
		t.Fatalf("no line in %q", line)
	}
	for {
		k, _, err := dec.NextTag()
		if err != nil {
			t.Fatalf("bad self line %q: %v", line, err)
		}
		if k == nil {
			break
		}
	}
	for {
		k, v, err := dec.NextField()
		if err != nil {
			t.Fatalf("bad self line %q: %v", line, err)
		}
		if k == nil {
			return source, note
		}
		switch string(k) {
		case "source":
			source = v.StringV()
		case "source_note":
			note = v.StringV()
		}
	}
}
