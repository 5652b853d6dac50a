//go:build linux

package session

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// agent_safety_test.go: a user controls their own transcript folder and
// may put anything there. The transcripts are those of claudeConversation
// (agent_transcript_test.go: Claude Code's line shapes as in
// daaain/claude-code-log test/test_data and marot/spotter
// test/fixtures/transcripts); the hostile entries are ours.

// gatherWithin gathers, failing the test if the gather has not returned
// after a minute: a gather blocked in open() on a FIFO never returns, and
// no legitimate one takes that long even on a loaded machine.
func (a *agentGatherer) gatherWithin(at time.Time) ([]Session, []string) {
	a.t.Helper()
	type result struct {
		sessions []Session
		notes    []string
	}
	done := make(chan result, 1)
	go func() {
		a.clock.t = at
		s, err := a.m.Gather()
		if err != nil {
			done <- result{}
			return
		}
		sessions, notes := a.g.Group(s)
		done <- result{sessions, notes}
	}()
	select {
	case r := <-done:
		if r.sessions == nil {
			a.t.Fatal("gather failed")
		}
		return r.sessions, r.notes
	case <-time.After(time.Minute):
		a.t.Fatal("the gather hangs")
		return nil, nil
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

func hasNote(notes []string, parts ...string) bool {
	for _, n := range notes {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(n, p)
		}
		if all {
			return true
		}
	}
	return false
}

// The transcript is swapped for a FIFO between the directory listing and
// the open (a hook runs there): the gather returns, the agent has no
// transcript, and the note, the agent state and its error say why. Once a
// regular file is back, it is read. For Codex the first open is the read
// of the first line that names the session's folder.
func TestAgentTranscriptSwappedForFIFO(t *testing.T) {
	for _, agent := range []string{"claude", "codex"} {
		t.Run(agent, func(t *testing.T) {
			root, home := agentFixture(t)
			path, lines := agentTranscriptPath(home, agent)
			writeTranscript(t, path, lines, agentNow.Add(-5*time.Minute))
			ag := newAgentGatherer(t, root, AgentStatusConfig{})
			tr := &ag.g.kind(KindAgent).(*agentKind).tracker
			fifo := filepath.Join(t.TempDir(), "fifo")
			mkfifo(t, fifo)
			tr.beforeOpen = func(p string) {
				if p == path {
					if err := os.Rename(fifo, path); err != nil {
						t.Error(err)
					}
					tr.beforeOpen = nil
				}
			}
			ref := "agent:" + agent + "/work/app"
			sessions, notes := ag.gatherWithin(agentNow)
			a := agentOf(t, sessions, ref)
			if a.Transcript != nil || a.Status != AgentIdle {
				t.Errorf("after the swap: transcript %+v, status %s, error %q", a.Transcript, a.Status, a.TranscriptError)
			}
			if len(a.Skipped) != 1 || a.Skipped[0].Path != path || a.Skipped[0].Why != "not a regular file: a FIFO" {
				t.Errorf("skipped %+v", a.Skipped)
			}
			if !hasNote(notes, ref[len("agent:"):]+": 1 file of its transcript folders not read: "+path+" (not a regular file: a FIFO)") {
				t.Errorf("notes %q", notes)
			}

			// Still a FIFO: the listing skips it without opening it.
			sessions, _ = ag.gatherWithin(agentNow.Add(time.Second))
			if a := agentOf(t, sessions, ref); a.Transcript != nil || len(a.Skipped) != 1 || a.Skipped[0].Why != "not a regular file: a FIFO" {
				t.Errorf("the FIFO listed: transcript %+v, skipped %+v", a.Transcript, a.Skipped)
			}
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			writeTranscript(t, path, lines, agentNow.Add(-5*time.Minute))
			sessions, notes = ag.gatherWithin(agentNow.Add(2 * time.Second))
			if a := agentOf(t, sessions, ref); a.Transcript == nil || a.Transcript.Turns != 1 || len(a.Skipped) != 0 || hasNote(notes, "not read") {
				t.Errorf("a regular file again: transcript %+v, skipped %+v, notes %q", a.Transcript, a.Skipped, notes)
			}
		})
	}
}

// agentTranscriptPath is where the fixture's claude (105) or codex (206)
// agent's transcript goes, and a conversation in its format.
func agentTranscriptPath(home, agent string) (string, []string) {
	if agent == "codex" {
		return filepath.Join(home, ".codex", "sessions", agentNow.UTC().Format("2006/01/02"), "rollout-2023-11-14T22-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl"),
			codexLines(agentNow.Add(-5*time.Minute), "/home/dev/work/app")
	}
	return claudeFile(home, "5f2c9a1e-0000-4000-8000-000000000001"), claudeConversation(agentNow.Add(-5 * time.Minute))
}

// Entries of the transcript folder that cannot be transcripts are skipped
// and named, each with why; the agent's real transcript is read.
func TestAgentTranscriptFolderHostileEntries(t *testing.T) {
	root, home := agentFixture(t)
	path := claudeFile(home, "5f2c9a1e-0000-4000-8000-000000000001")
	writeTranscript(t, path, claudeConversation(agentNow.Add(-5*time.Minute)), agentNow.Add(-5*time.Minute))
	dir := filepath.Dir(path)
	mkfifo(t, filepath.Join(dir, "fifo.jsonl"))
	if err := os.Symlink("/etc/shadow", filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "sock.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sessions, notes := newAgentGatherer(t, root, AgentStatusConfig{}).gatherWithin(agentNow)
	a := agentOf(t, sessions, "agent:claude/work/app")
	if a.Transcript == nil || a.Transcript.Path != path {
		t.Fatalf("transcript %+v", a.Transcript)
	}
	want := map[string]string{
		filepath.Join(dir, "fifo.jsonl"): "not a regular file: a FIFO",
		filepath.Join(dir, "link.jsonl"): "a symbolic link, not followed",
		filepath.Join(dir, "sock.jsonl"): "not a regular file: a socket",
	}
	if len(a.Skipped) != len(want) {
		t.Errorf("skipped %+v", a.Skipped)
	}
	for _, f := range a.Skipped {
		if want[f.Path] != f.Why {
			t.Errorf("skipped %s: %q, want %q", f.Path, f.Why, want[f.Path])
		}
	}
	if !hasNote(notes, "agent claude/work/app: 3 files of its transcript folders not read", "link.jsonl (a symbolic link, not followed)") {
		t.Errorf("notes %q", notes)
	}
}

// A user swaps their transcript between a regular file and a FIFO as fast
// as they can while procwalk gathers: every gather returns, for Claude
// Code's transcripts and for Codex's, whose first line is read to learn
// the session's folder. The swaps race the gathers freely; whatever the
// interleaving, none may block.
func TestAgentTranscriptSwappingFIFO(t *testing.T) {
	for _, agent := range []string{"claude", "codex"} {
		t.Run(agent, func(t *testing.T) {
			root, home := agentFixture(t)
			path, lines := agentTranscriptPath(home, agent)
			writeTranscript(t, path, lines, agentNow.Add(-5*time.Minute))
			dir := t.TempDir()
			reg, fifo, tmp := filepath.Join(dir, "reg"), filepath.Join(dir, "fifo"), filepath.Join(dir, "tmp")
			if err := os.Link(path, reg); err != nil {
				t.Fatal(err)
			}
			mkfifo(t, fifo)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					src := reg
					if i%2 == 1 {
						src = fifo
					}
					os.Remove(tmp)
					if os.Link(src, tmp) != nil || os.Rename(tmp, path) != nil {
						t.Error("swap failed")
						return
					}
				}
			}()
			defer func() { close(stop); wg.Wait() }()
			ag := newAgentGatherer(t, root, AgentStatusConfig{})
			read := 0
			for i := range 300 {
				sessions, _ := ag.gatherWithin(agentNow.Add(time.Duration(i) * time.Second))
				if a := agentOf(t, sessions, "agent:"+agent+"/work/app"); a.Transcript != nil {
					read++
				}
			}
			t.Logf("300 gathers while the transcript swapped: %d read it", read)
		})
	}
}
