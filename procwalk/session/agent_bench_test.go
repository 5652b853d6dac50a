//go:build linux

package session

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// BenchmarkAgentTranscripts measures what following agents' transcripts
// adds to a gather in steady state, the target being ≤ 1 ms of CPU
// for 20 agents whose transcripts hold 50 MB each, reading only the bytes
// appended since the last gather:
//
//	go test ./procwalk/session/ -run '^$' -bench AgentTranscripts -benchtime 200x -v
//
// It logs the first gather too, as a one-shot command makes it: with the
// default bound of a first read (8 MiB of each transcript) and whole.
//
// Each iteration appends one assistant line to every transcript, then
// groups the same snapshot twice, interleaved: with the transcript sources
// (agents) and without them (bare: process matching and names alone). It
// reports both, their difference in CPU time (added-cpu-us/gather), and
// the transcript bytes read against those appended (they must be equal).
func BenchmarkAgentTranscripts(b *testing.B) {
	const agents, size = 20, 50 << 20
	root, home := agentFixture(b)
	t0 := agentStart.Add(time.Minute)
	block := benchTranscriptBlock(t0)
	content := bytes.Repeat(block, size/len(block)+1)[:0]
	for len(content)+len(block) <= size {
		content = append(content, block...)
	}
	var paths []string
	for i := range agents {
		pid := strconv.Itoa(1000 + i)
		addClone(b, root, "105", pid, strconv.Itoa(4000+i))
		cwd := fmt.Sprintf("/home/dev/work/app%d", i)
		link := filepath.Join(root, pid, "cwd")
		if err := os.Remove(link); err != nil {
			b.Fatal(err)
		}
		if err := os.Symlink(cwd, link); err != nil {
			b.Fatal(err)
		}
		folder, _ := claudeProjectDir(cwd)
		path := filepath.Join(home, ".claude", "projects", folder, "s.jsonl")
		writeLines(b, path, nil, string(content))
		paths = append(paths, path)
	}
	fsys, err := procwalk.NewFS(root)
	if err != nil {
		b.Fatal(err)
	}
	newGrouper := func(transcripts bool, firstRead int64) *Grouper {
		rules := DefaultAgents()
		if !transcripts {
			for i := range rules {
				rules[i].Transcript = nil
			}
		}
		g, err := NewGrouper(fsys, Config{Kinds: []string{KindAgent}, Tmux: TmuxConfig{Sockets: []string{}}, Agents: rules,
			AgentStatus: AgentStatusConfig{FirstReadBytes: firstRead}})
		if err != nil {
			b.Fatal(err)
		}
		return g
	}
	withT, bare := newGrouper(true, 0), newGrouper(false, 0)
	s, err := procwalk.NewMonitor(fsys, procwalk.MonitorConfig{NoRates: true, Keep: true, Clock: &stepClock{t: agentNow}}, withT).Gather()
	if err != nil {
		b.Fatal(err)
	}
	// The first read of every transcript, bounded (the default, 8 MiB of
	// each) and whole (1 GB), as a one-shot procwalk sessions reads them.
	for _, g := range []*Grouper{withT, newGrouper(true, -1)} {
		first, c0 := time.Now(), cpuTime(b)
		sessions, _ := g.Group(s)
		b.Logf("first gather, first read bound %d bytes (-1: none): %d transcripts of %d MB, %d MB read, %d MB skipped, in %v wall, %v CPU",
			g.cfg.AgentStatus.FirstReadBytes, countTranscripts(sessions), size>>20, readBytes(sessions)>>20,
			(transcriptBytes(g)-readBytes(sessions))>>20, time.Since(first).Round(time.Millisecond), (cpuTime(b) - c0).Round(time.Millisecond))
	}
	bare.Group(s)
	line := []byte(claudeAssistantLine(t0, "msg_bench", claudeModel, "text", "end_turn", 4, 40, 15000, 200) + "\n")

	b.Run("steady", func(b *testing.B) {
		b.ReportAllocs()
		var agentsCPU, bareCPU time.Duration
		var appended, read int64
		for range b.N {
			b.StopTimer()
			for _, p := range paths {
				appendBytes(b, p, line)
			}
			appended += int64(len(line) * len(paths))
			before := transcriptBytes(withT)
			b.StartTimer()
			c0 := cpuTime(b)
			withT.Group(s)
			c1 := cpuTime(b)
			bare.Group(s)
			c2 := cpuTime(b)
			b.StopTimer()
			read += transcriptBytes(withT) - before
			agentsCPU += c1 - c0
			bareCPU += c2 - c1
			b.StartTimer()
		}
		if read != appended {
			b.Fatalf("read %d transcript bytes, %d appended", read, appended)
		}
		n := float64(b.N)
		b.ReportMetric(float64(agentsCPU.Microseconds())/n, "agents-cpu-us/gather")
		b.ReportMetric(float64(bareCPU.Microseconds())/n, "bare-cpu-us/gather")
		b.ReportMetric(float64((agentsCPU-bareCPU).Microseconds())/n, "added-cpu-us/gather")
		b.ReportMetric(float64(read)/n, "read-bytes/gather")
	})
}

// benchTranscriptBlock is one exchange of a long session: a prompt, a
// command's 2 KB result, a file read's 16 KB result and the answer.
func benchTranscriptBlock(at time.Time) []byte {
	var out bytes.Buffer
	result := func(id string, size int) string {
		return fmt.Sprintf(`{"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"tool_use_id":%q,"type":"tool_result","content":%q}]},"timestamp":%q}`,
			id, string(bytes.Repeat([]byte("ok  	example.com/pkg	0.012s\n"), size/26)), at.UTC().Format(time.RFC3339Nano))
	}
	for _, l := range []string{
		claudeUserLine(at, "run the tests again"),
		claudeAssistantLine(at, "msg_a", claudeModel, "tool_use:toolu_b", "tool_use", 3, 60, 40000, 500),
		result("toolu_b", 2<<10),
		claudeAssistantLine(at, "msg_b", claudeModel, "tool_use:toolu_c", "tool_use", 3, 60, 40000, 500),
		result("toolu_c", 16<<10),
		claudeAssistantLine(at, "msg_c", claudeModel, "text", "end_turn", 3, 120, 41000, 700),
	} {
		out.WriteString(l)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

func appendBytes(b *testing.B, path string, line []byte) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(line); err != nil {
		b.Fatal(err)
	}
	f.Close()
}

// transcriptBytes sums how far the Grouper has read its transcripts.
func transcriptBytes(g *Grouper) int64 {
	var n int64
	for _, t := range g.kind(KindAgent).(*agentKind).tracker.byLeader {
		if t.file != nil {
			n += t.file.offset + int64(len(t.file.line))
		}
	}
	return n
}

// readBytes sums the transcript bytes the sessions' reads took in.
func readBytes(sessions []Session) int64 {
	var n int64
	for i := range sessions {
		if a := sessions[i].Agent; a != nil && a.Transcript != nil {
			n += a.Transcript.Bytes - a.Transcript.SkippedBytes
		}
	}
	return n
}

func countTranscripts(sessions []Session) int {
	n := 0
	for i := range sessions {
		if a := sessions[i].Agent; a != nil && a.Transcript != nil {
			n++
		}
	}
	return n
}

// BenchmarkAgentBigFolder measures a gather's cost for agents whose folder
// holds 100,000 transcripts (users report 106,000 in one folder): five
// agents there, each named by Claude Code's record of its process, and a
// sixth there that has written nothing yet (its candidates are looked for
// at every gather); one agent alone in its own such folder, found as the
// only agent there.
//
//	go test ./procwalk/session/ -run '^$' -bench AgentBigFolder -benchtime 100x -v
//
// steady: nothing changed since the last gather, the target being at most
// 5 ms (the issue's); new-file: a new transcript appeared in each folder
// since the last gather, which lists the folders again (names only). Each
// reports the wall and CPU time of grouping the same snapshot with the
// transcript sources less without them (bare), per gather. The first
// gather, which stats every file the only agent could own, is logged.
func BenchmarkAgentBigFolder(b *testing.B) {
	const files = 100000
	root, home, pids, ticks := fiveAgents(b)
	// An agent that has written nothing yet, and one alone in its folder of
	// as many files.
	addClone(b, root, "105", "1099", "5500")
	addClone(b, root, "105", "1100", "5000")
	setCwdTB(b, root, "1100", "/home/dev/work/solo")
	folders := []string{filepath.Join(home, ".claude", "projects", "-home-dev-work-app"), filepath.Join(home, ".claude", "projects", "-home-dev-work-solo")}
	old := agentStart.Add(-24 * time.Hour)
	line := []byte(`{"type":"summary","summary":"An old session","leafUuid":"0b7e51c2-9a3f-4c1e-8d2a-6f0e3b1a2c4d"}` + "\n")
	for _, dir := range folders {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		for i := range files {
			p := filepath.Join(dir, fmt.Sprintf("%08x-0000-4000-8000-%012d.jsonl", i, i))
			if err := os.WriteFile(p, line, 0o600); err != nil {
				b.Fatal(err)
			}
			if err := os.Chtimes(p, old, old); err != nil {
				b.Fatal(err)
			}
		}
	}
	for k, pid := range pids {
		writeRecord(b, home, pid, ticks[k], sessionIDOf(k))
		writeTranscript(b, claudeFile(home, sessionIDOf(k)), claudeConversation(agentNow.Add(-10*time.Minute)), agentNow.Add(-time.Minute))
	}
	writeTranscript(b, filepath.Join(folders[1], "solo.jsonl"), claudeConversation(agentNow.Add(-10*time.Minute)), agentNow.Add(-time.Minute))
	fsys, err := procwalk.NewFS(root)
	if err != nil {
		b.Fatal(err)
	}
	newGrouper := func(transcripts bool) *Grouper {
		rules := DefaultAgents()
		if !transcripts {
			for i := range rules {
				rules[i].Transcript = nil
			}
		}
		g, err := NewGrouper(fsys, Config{Kinds: []string{KindAgent}, Tmux: TmuxConfig{Sockets: []string{}}, Agents: rules})
		if err != nil {
			b.Fatal(err)
		}
		// The file system's clock a second ahead: no folder is listed
		// again for having changed a moment before (racyWindow).
		g.kind(KindAgent).(*agentKind).tracker.wall = func() time.Time { return time.Now().Add(time.Second) }
		return g
	}
	withT, bare := newGrouper(true), newGrouper(false)
	s, err := procwalk.NewMonitor(fsys, procwalk.MonitorConfig{NoRates: true, Keep: true, Clock: &stepClock{t: agentNow}}, withT).Gather()
	if err != nil {
		b.Fatal(err)
	}
	w0, c0 := time.Now(), cpuTime(b)
	sessions, _ := withT.Group(s)
	b.Logf("first gather: %d agents, %d bound, in %v wall, %v CPU", len(sessions), countTranscripts(sessions), time.Since(w0).Round(time.Millisecond), (cpuTime(b) - c0).Round(time.Millisecond))
	if countTranscripts(sessions) != 6 {
		b.Fatalf("%d of 6 agents bound", countTranscripts(sessions))
	}
	bare.Group(s)
	n := 0
	for _, sub := range []struct {
		name    string
		newFile bool
	}{{"steady", false}, {"new-file", true}} {
		b.Run(sub.name, func(b *testing.B) {
			b.ReportAllocs()
			var wall, cpu time.Duration
			for range b.N {
				b.StopTimer()
				if sub.newFile {
					n++
					for _, dir := range folders {
						p := filepath.Join(dir, fmt.Sprintf("new-%d.jsonl", n))
						if err := os.WriteFile(p, line, 0o600); err != nil {
							b.Fatal(err)
						}
						os.Chtimes(p, old, old)
					}
				}
				b.StartTimer()
				w0, c0 := time.Now(), cpuTime(b)
				got, _ := withT.Group(s)
				w1, c1 := time.Now(), cpuTime(b)
				bare.Group(s)
				w2, c2 := time.Now(), cpuTime(b)
				b.StopTimer()
				if countTranscripts(got) != 6 {
					b.Fatalf("%d of 6 agents bound", countTranscripts(got))
				}
				wall += w1.Sub(w0) - w2.Sub(w1)
				cpu += (c1 - c0) - (c2 - c1)
				b.StartTimer()
			}
			b.ReportMetric(float64(wall.Microseconds())/float64(b.N)/1000, "added-wall-ms/gather")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "added-cpu-ms/gather")
		})
	}
}

func setCwdTB(t testing.TB, root, pid, dir string) {
	t.Helper()
	link := filepath.Join(root, pid, "cwd")
	os.Remove(link)
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
}
