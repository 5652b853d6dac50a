//go:build linux

package session

import (
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// agent_subagents.go reads the transcripts of a Claude Code agent's
// subagents, which are part of the agent: their growth makes it working,
// their tokens count (Tokens, SubagentTokens) and they never become its
// transcript. Where they are:
//
//   - current versions: <folder>/<session id>/subagents/agent-<id>.jsonl,
//     beside agent-<id>.meta.json (agentType, description, toolUseId);
//   - older versions: <folder>/agent-<hash>.jsonl, and the SDK's subagents
//     <folder>/<uuid>.jsonl, whose lines are isSidechain and name the
//     session they serve in sessionId.
//
// (marot/spotter's fixtures, Claude Code 2.1.39; daaain/claude-code-log's
// minimal_showcase with meta.json.)

// subagents are an agent's subagent transcripts.
type subagents struct {
	files map[string]*subagentFile
	// retired are the counts of subagent transcripts no longer followed
	// (past maxSubagents, the least recently written): kept, so that the
	// agent's counters never go back; retiredPaths are not followed again.
	retired        TokenCounts
	retiredByModel []ModelTokens
	retiredPaths   map[string]bool
	// scanned is the session folder looked through for older versions'
	// subagent files; later only its new names are.
	scanned *transcriptDir
}

type subagentFile struct {
	f    *transcriptFile
	size int64 // at the last read
	grew time.Time
}

// maxSubagents bounds the subagent transcripts followed per agent.
const maxSubagents = 64

func (s *subagents) tokens() TokenCounts {
	c := s.retired
	for _, sf := range s.files {
		c.Add(sf.f.t.Tokens())
	}
	return c
}

// byModel are the subagents' counts by model.
func (s *subagents) byModel() []ModelTokens {
	lists := [][]ModelTokens{s.retiredByModel}
	for _, sf := range s.files {
		lists = append(lists, sf.f.t.ByModel)
	}
	return mergeModels(lists...)
}

// working counts the subagents whose transcript grew within d of now.
func (s *subagents) working(now time.Time, d time.Duration) int {
	n := 0
	for _, sf := range s.files {
		if !sf.grew.IsZero() && now.Sub(sf.grew) <= d {
			n++
		}
	}
	return n
}

// lastActivity is the time of the last entry of any subagent transcript.
func (s *subagents) lastActivity() time.Time {
	var last time.Time
	for _, sf := range s.files {
		if sf.f.t.LastActivity.After(last) {
			last = sf.f.t.LastActivity
		}
	}
	return last
}

// readSubagents finds the agent's subagent transcripts (again when their
// folders changed) and reads what was appended to each that grew.
func (g *Grouper) readSubagents(t *agentTrack, tr *agentTracker, now time.Time, firstRead int64) {
	if t.source.Parser != "claude" || t.file == nil {
		return
	}
	main := t.file.path
	folder, name := filepath.Split(main)
	folder = filepath.Clean(folder)
	session := strings.TrimSuffix(name, ".jsonl")
	add := func(path string) {
		if t.subs.files == nil {
			t.subs.files = map[string]*subagentFile{}
		}
		if t.subs.files[path] == nil && path != main && !t.subs.retiredPaths[path] {
			t.subs.files[path] = &subagentFile{f: &transcriptFile{path: path, uid: t.id.uid, parser: claudeParser{}, firstRead: firstRead}}
		}
	}
	// Current versions: their own folder, small.
	if d := tr.dir(filepath.Join(folder, session, "subagents"), t.id.uid); d.listed {
		for n := range d.files {
			if strings.HasPrefix(n, "agent-") {
				add(filepath.Join(d.path, n))
			}
		}
	}
	// Older versions and the SDK: beside the session file, found by their
	// first line; looked at when the folder has new names (or first).
	for _, d := range t.dirIdx {
		if d.path != folder {
			continue
		}
		var names []string
		switch {
		case t.subs.scanned != d:
			names, t.subs.scanned = d.names(), d
		case d.changed == tr.gather:
			names = d.added
		}
		since := t.start.Add(-transcriptSlack)
		for _, n := range names {
			f := d.files[n]
			if f == nil || n == name || f.typ != syscall.DT_REG && f.typ != syscall.DT_UNKNOWN {
				continue
			}
			d.stat(f, false)
			if !f.isReg || f.uid != t.id.uid || f.mtime.Before(since) {
				continue
			}
			if h := d.readHead(f, tr); h.err == "" && h.sidechain && h.sessionID == session {
				add(filepath.Join(d.path, n))
			}
		}
	}
	for path, sf := range t.subs.files {
		var st unix.Stat_t
		if unix.Lstat(path, &st) != nil {
			continue // gone: its counts stay
		}
		if st.Size == sf.size {
			continue
		}
		first := sf.f.offset == 0 && len(sf.f.line) == 0
		grew, buf, err := sf.f.update(tr.buf, now)
		tr.buf = buf
		if err != nil {
			t.skipped.add(path, skipReason(err))
			continue
		}
		sf.size = sf.f.t.Bytes
		if grew {
			sf.grew = now
			if first && sf.f.modTime.Before(now) {
				sf.grew = sf.f.modTime // catching up, not growth
			}
		}
	}
	t.subs.retire()
}

// retire stops following the least recently written subagents past
// maxSubagents, keeping their counts.
func (s *subagents) retire() {
	for len(s.files) > maxSubagents {
		var oldest string
		var at time.Time
		for p, sf := range s.files {
			if oldest == "" || sf.f.modTime.Before(at) {
				oldest, at = p, sf.f.modTime
			}
		}
		s.retired.Add(s.files[oldest].f.t.Tokens())
		s.retiredByModel = mergeModels(s.retiredByModel, s.files[oldest].f.t.ByModel)
		delete(s.files, oldest)
		if s.retiredPaths == nil {
			s.retiredPaths = map[string]bool{}
		}
		if len(s.retiredPaths) < 4096 {
			s.retiredPaths[oldest] = true
		}
	}
}
