package session

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// agent_transcript.go reads the transcripts AI coding agents write as they
// work (one JSON object a line, appended), incrementally: each gather reads
// only the bytes appended since the last one, keeps an unfinished last line
// until its newline arrives, skips and counts malformed lines, and starts
// over when the file was truncated or replaced. What a parser takes from the
// lines (agent_transcript_claude.go, agent_transcript_codex.go) accumulates
// in a Transcript.

// TranscriptSource says where an agent keeps its transcripts and how to
// read them: AgentRule.Transcript.
type TranscriptSource struct {
	// Dir is the directory holding the agent's transcripts, with
	// placeholders: {home} the agent's home directory (HOME of its
	// environment, else its owner's home in the passwd file), {project}
	// the agent's working directory with every character that is not an
	// ASCII letter or digit turned into '-' (Claude Code's folder names),
	// and {yyyy}, {mm}, {dd} each day (UTC and local) from the agent's
	// start to the gather, at most maxTranscriptDays days back.
	Dir string
	// Parser names the format: "claude" or "codex" (TranscriptParsers).
	Parser string
}

// ClaudeTranscripts is where Claude Code keeps its transcripts:
// ~/.claude/projects/<cwd with non-alphanumerics as '-'>/<session id>.jsonl.
func ClaudeTranscripts() *TranscriptSource {
	return &TranscriptSource{Dir: "{home}/.claude/projects/{project}", Parser: "claude"}
}

// CodexTranscripts is where the Codex CLI keeps its session files:
// ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl.
func CodexTranscripts() *TranscriptSource {
	return &TranscriptSource{Dir: "{home}/.codex/sessions/{yyyy}/{mm}/{dd}", Parser: "codex"}
}

// TranscriptParsers lists the parser names a TranscriptSource may name.
func TranscriptParsers() []string { return []string{"claude", "codex"} }

// ParseTranscriptSource reads "NAME=PARSER:DIR", the form of the
// --agent-transcript flag, e.g. "claude=claude:{home}/.claude/projects/{project}".
func ParseTranscriptSource(s string) (name string, src *TranscriptSource, err error) {
	name, rest, ok := strings.Cut(s, "=")
	parser, dir, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || name == "" || dir == "" {
		return "", nil, fmt.Errorf("%w: agent transcript %q: want NAME=PARSER:DIR, e.g. claude=claude:{home}/.claude/projects/{project}", ErrBadConfig, s)
	}
	src = &TranscriptSource{Dir: dir, Parser: parser}
	if err := src.check(); err != nil {
		return "", nil, fmt.Errorf("%w: agent transcript %q: %w", ErrBadConfig, s, err)
	}
	return name, src, nil
}

func (src *TranscriptSource) check() error {
	if newTranscriptParser(src.Parser) == nil {
		return fmt.Errorf("unknown parser %q: parsers are %s", src.Parser, strings.Join(TranscriptParsers(), ", "))
	}
	if !strings.HasPrefix(src.Dir, "/") && !strings.HasPrefix(src.Dir, "{home}") {
		return fmt.Errorf("directory %q: want an absolute path or one starting with {home}", src.Dir)
	}
	return nil
}

// maxTranscriptDays bounds the days {yyyy}/{mm}/{dd} expand to: an agent
// running for weeks keeps writing today's file, not one of its first day.
const maxTranscriptDays = 7

// dirs expands Dir for an agent.
func (src *TranscriptSource) dirs(home, cwd string, start, now time.Time) []string {
	d := strings.NewReplacer("{home}", home, "{project}", projectDir(cwd)).Replace(src.Dir)
	if !strings.Contains(d, "{yyyy}") && !strings.Contains(d, "{mm}") && !strings.Contains(d, "{dd}") {
		return []string{d}
	}
	var out []string
	seen := map[string]bool{}
	from := now.AddDate(0, 0, -maxTranscriptDays)
	if start.After(from) {
		from = start
	}
	for _, loc := range []*time.Location{time.UTC, time.Local} {
		for day := from.In(loc); ; day = day.AddDate(0, 0, 1) {
			y, m, dd := day.Date()
			e := strings.NewReplacer("{yyyy}", fmt.Sprintf("%04d", y), "{mm}", fmt.Sprintf("%02d", m), "{dd}", fmt.Sprintf("%02d", dd)).Replace(d)
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
			ny, nm, nd := now.In(loc).Date()
			if y > ny || y == ny && (m > nm || m == nm && dd >= nd) {
				break
			}
		}
	}
	return out
}

// projectDir is Claude Code's folder name for a working directory: every
// character that is not an ASCII letter or digit becomes '-' (byte-wise, as
// observed: "/home/me/my_app" is "-home-me-my-app").
func projectDir(cwd string) string {
	b := []byte(cwd)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// Transcript is what an agent's transcript says, read up to its end.
type Transcript struct {
	Path      string
	SessionID string
	Model     string
	// CWD is the working directory the transcript names, when it does
	// (Codex's session_meta): files of other projects are skipped.
	CWD string
	// ContextUsedTokens is what the last model call read: input, cache
	// read and cache creation tokens of the last assistant turn.
	ContextUsedTokens int64
	// ContextWindowTokens is the model's window when the transcript says
	// (Codex does); 0 means the configured window applies.
	ContextWindowTokens int64
	// Cumulative usage over every model call in the file.
	InputTokens         int64
	OutputTokens        int64
	CacheReadTokens     int64
	CacheCreationTokens int64
	// Turns counts the prompts the person sent.
	Turns int
	// LastActivity is the time of the last entry (its timestamp, else when
	// it was read).
	LastActivity time.Time
	// Last is the last entry of the conversation (meta lines aside).
	Last EntryKind
	// PendingTools counts tool uses still awaiting their results;
	// PendingSince is when the oldest of them was asked for.
	PendingTools int
	PendingSince time.Time
	// Malformed counts lines that were not JSON objects of the format;
	// Oversized those longer than maxTranscriptLine, skipped unread.
	Malformed int
	Oversized int
	// Bytes is how far the file has been read.
	Bytes int64
	// SkippedBytes is how much of the file before that was never read: a
	// first read of a file larger than AgentStatusConfig.FirstReadBytes
	// reads its first line, then its end alone. Above 0, the cumulative
	// counts (tokens, turns, malformed lines) are those of the part read,
	// unless the format states totals (Codex's token_count does).
	SkippedBytes int64

	pending []string // ids of the tool uses awaiting results, oldest first
	lastMsg string   // Claude: id of the last assistant message counted
	lastUse usage    // its usage, replaced when the message's next block repeats it
}

// EntryKind says what the last entry of a conversation was.
type EntryKind uint8

const (
	EntryNone        EntryKind = iota
	EntryPrompt                // the person's prompt: the model is to answer
	EntryToolResult            // a tool's result: the model is to go on
	EntryToolUse               // the model asked for a tool
	EntryReply                 // the model answered and ended its turn
	EntryInterrupted           // the person interrupted the turn
)

func (k EntryKind) String() string {
	return [...]string{"none", "prompt", "tool_result", "tool_use", "reply", "interrupted"}[k]
}

// usage is the token counts of one model call.
type usage struct{ input, output, cacheRead, cacheCreation int64 }

// addUsage counts one model call; a repeat of the message last counted
// (Claude writes one line per content block, each with the message's
// usage) replaces its counts instead of adding them again.
func (t *Transcript) addUsage(msgID string, u usage) {
	if msgID != "" && msgID == t.lastMsg {
		t.InputTokens -= t.lastUse.input
		t.OutputTokens -= t.lastUse.output
		t.CacheReadTokens -= t.lastUse.cacheRead
		t.CacheCreationTokens -= t.lastUse.cacheCreation
	}
	t.lastMsg, t.lastUse = msgID, u
	t.InputTokens += u.input
	t.OutputTokens += u.output
	t.CacheReadTokens += u.cacheRead
	t.CacheCreationTokens += u.cacheCreation
}

// maxPendingTools bounds the tool uses remembered: a model asks for a few
// at once; a transcript naming thousands is not one to trust for "blocked".
const maxPendingTools = 64

func (t *Transcript) toolUse(id string, at time.Time) {
	if len(t.pending) == 0 {
		t.PendingSince = at
	}
	if len(t.pending) < maxPendingTools {
		t.pending = append(t.pending, id)
	}
	t.PendingTools = len(t.pending)
}

func (t *Transcript) toolResult(id string) {
	for i, p := range t.pending {
		if p == id {
			t.pending = append(t.pending[:i], t.pending[i+1:]...)
			break
		}
	}
	t.PendingTools = len(t.pending)
}

func (t *Transcript) clearPending() {
	t.pending = t.pending[:0]
	t.PendingTools = 0
	t.PendingSince = time.Time{}
}

// transcriptParser folds lines of one format into a Transcript.
type transcriptParser interface {
	// line folds one complete line (no newline); false means malformed.
	line(b []byte, t *Transcript, now time.Time) bool
}

func newTranscriptParser(name string) transcriptParser {
	switch name {
	case "claude":
		return claudeParser{}
	case "codex":
		return codexParser{}
	}
	return nil
}

// maxTranscriptLine bounds the unfinished line kept between reads: a tool
// result holding a whole file can be megabytes; longer lines are skipped.
const maxTranscriptLine = 4 << 20

// transcriptChunk is the read size: one read per gather for a few appended
// lines, and a bounded buffer for a first read of a large file.
const transcriptChunk = 64 << 10

// transcriptFile reads one transcript incrementally.
type transcriptFile struct {
	path      string
	uid       uint32 // the only owner accepted
	parser    transcriptParser
	firstRead int64 // bound of a first read (AgentStatusConfig.FirstReadBytes); <= 0: none
	dev       uint64
	ino       uint64
	offset    int64  // bytes consumed (lines complete, or skipped)
	line      []byte // the unfinished last line
	skip      bool   // inside an oversized line, or the line a first read starts in: drop bytes up to its newline
	seek      bool   // the bytes skip drops are the first read's, counted in t.SkippedBytes
	grew      time.Time
	modTime   time.Time // the file's at the last open
	t         Transcript
}

// ErrTranscriptOwner is returned for a transcript not owned by the agent's
// user: procwalk never reads another user's file on an agent's behalf.
var ErrTranscriptOwner = fsio.ErrOtherOwner

// update reads what was appended since the last call, from the start when
// the file was replaced (another inode) or truncated (shorter than what was
// read). A read from the start of a file larger than firstRead reads its
// first line (which names the session: Codex's session_meta), then from the
// first line that starts in its last firstRead bytes. buf is a reused read
// buffer. It reports whether the file grew. The file is opened as one
// another user controls (fsio.OpenUserFile): a FIFO, a link or another
// user's file is refused, never waited on.
func (f *transcriptFile) update(buf []byte, now time.Time) (bool, []byte, error) {
	file, err := fsio.OpenUserFile(f.path, int(f.uid))
	if err != nil {
		return false, buf, err
	}
	defer file.Close()
	if file.Dev != f.dev || file.Ino != f.ino || file.Size < f.offset+int64(len(f.line)) {
		*f = transcriptFile{path: f.path, uid: f.uid, parser: f.parser, firstRead: f.firstRead, dev: file.Dev, ino: file.Ino}
		f.t.Path = f.path
	}
	f.modTime = file.ModTime
	size := file.Size
	end := f.offset + int64(len(f.line))
	if size == end {
		return false, buf, nil
	}
	if cap(buf) < transcriptChunk {
		buf = make([]byte, transcriptChunk)
	}
	buf = buf[:transcriptChunk]
	if end == 0 && f.firstRead > 0 && size > f.firstRead {
		end = f.seekTail(file, buf, size, now)
	}
	start := end
	var readErr error
	for end < size {
		n, err := file.ReadAt(buf[:min(int64(len(buf)), size-end)], end)
		if n <= 0 {
			readErr = err
			if readErr == nil {
				readErr = io.ErrUnexpectedEOF // shrank while read: next gather starts over
			}
			break
		}
		end += int64(n)
		f.feed(buf[:n], now)
	}
	f.t.Bytes = f.offset + int64(len(f.line))
	if end == start {
		// Nothing read: not growth, and the error says why.
		return false, buf, fmt.Errorf("reading %s: %w", f.path, readErr)
	}
	f.grew = now // what was read stands; a failure past it is met next gather
	return true, buf, nil
}

// seekTail starts the first read of a file of size bytes, larger than
// firstRead: it folds the first line (when it ends within a chunk), then
// skips to the byte before the last firstRead, from where skip drops the
// rest of the line it falls in (nothing more when that byte is a newline).
// It returns where reading goes on.
func (f *transcriptFile) seekTail(file *fsio.UserFile, buf []byte, size int64, now time.Time) int64 {
	if n, _ := file.ReadAt(buf[:min(int64(len(buf)), size)], 0); n > 0 {
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			f.feed(buf[:i+1], now)
		}
	}
	from := size - f.firstRead - 1
	if from <= f.offset {
		return f.offset // the first line reaches into the end: read on from it
	}
	f.t.SkippedBytes = from - f.offset
	f.offset, f.skip, f.seek = from, true, true
	return from
}

// feed splits b into lines, keeping an unfinished last one for the next.
func (f *transcriptFile) feed(b []byte, now time.Time) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if f.skip {
				f.offset += int64(len(b))
				if f.seek {
					f.t.SkippedBytes += int64(len(b))
				}
				return
			}
			if len(f.line)+len(b) > maxTranscriptLine {
				f.oversized()
				f.offset += int64(len(f.line) + len(b))
				f.line = f.line[:0]
				f.skip = true
				return
			}
			f.line = append(f.line, b...)
			return
		}
		part := b[:i]
		b = b[i+1:]
		if f.skip {
			f.offset += int64(len(part) + 1)
			if f.seek {
				f.t.SkippedBytes += int64(len(part) + 1)
			}
			f.skip, f.seek = false, false
			continue
		}
		line := part
		if len(f.line) > 0 {
			if len(f.line)+len(part) > maxTranscriptLine {
				f.oversized()
				f.offset += int64(len(f.line) + len(part) + 1)
				f.line = f.line[:0]
				continue
			}
			f.line = append(f.line, part...)
			line = f.line
		}
		f.offset += int64(len(line) + 1)
		if len(bytes.TrimSpace(line)) > 0 && !f.parser.line(line, &f.t, now) {
			f.t.Malformed++
		}
		f.line = f.line[:0]
	}
	if cap(f.line) > transcriptChunk && len(f.line) == 0 {
		f.line = nil // a long line passed: give its buffer back
	}
}

// oversized counts a line skipped unread. It may have been a tool's result:
// the pending tool uses are forgotten rather than reported as blocked.
func (f *transcriptFile) oversized() {
	f.t.Oversized++
	f.t.clearPending()
}

// fileInfoUID is the owner of a file, false when the system does not say.
func fileInfoUID(fi os.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}
