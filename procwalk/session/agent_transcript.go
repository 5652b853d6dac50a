//go:build linux

package session

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
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
	// environment, else its owner's home in the passwd file);
	// {claude_config} CLAUDE_CONFIG_DIR of its environment, else
	// {home}/.claude; {codex_home} CODEX_HOME, else {home}/.codex;
	// {project} Claude Code's folder name for the agent's working
	// directory (codex -C DIR's for Codex; claudeProjectDir); and {yyyy},
	// {mm}, {dd} each day (UTC and local) from the agent's start to the
	// gather, at most maxTranscriptDays days back.
	Dir string
	// Parser names the format: "claude" or "codex" (TranscriptParsers).
	Parser string
}

// ClaudeTranscripts is where Claude Code keeps its transcripts:
// $CLAUDE_CONFIG_DIR (~/.claude)/projects/<cwd's folder name>/<session id>.jsonl.
func ClaudeTranscripts() *TranscriptSource {
	return &TranscriptSource{Dir: "{claude_config}/projects/{project}", Parser: "claude"}
}

// CodexTranscripts is where the Codex CLI keeps its session files:
// $CODEX_HOME (~/.codex)/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl.
func CodexTranscripts() *TranscriptSource {
	return &TranscriptSource{Dir: "{codex_home}/sessions/{yyyy}/{mm}/{dd}", Parser: "codex"}
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
	if !strings.HasPrefix(src.Dir, "/") && !strings.HasPrefix(src.Dir, "{home}") && !strings.HasPrefix(src.Dir, "{claude_config}") && !strings.HasPrefix(src.Dir, "{codex_home}") {
		return fmt.Errorf("directory %q: want an absolute path or one starting with {home}, {claude_config} or {codex_home}", src.Dir)
	}
	return nil
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
	// read and cache creation tokens of the last assistant turn (Codex:
	// its last token count's total_tokens, Codex's own rule). After a
	// compaction it is what the compaction left (postTokens), or 0, not
	// known, until the next model call. An API error's zero usage leaves
	// it as it was.
	ContextUsedTokens int64
	// ContextWindowTokens is the model's window when the transcript says
	// (Codex does); 0 means the configured window applies.
	ContextWindowTokens int64
	// The cumulative usage over every model call in the file, each
	// message counted once (by its id) however many lines repeat it; the
	// fields of TokenCounts (Tokens).
	InputTokens           int64
	OutputTokens          int64
	CacheReadTokens       int64
	CacheCreationTokens   int64
	CacheCreation5mTokens int64
	CacheCreation1hTokens int64
	ReasoningTokens       int64
	WebSearchRequests     int64
	WebFetchRequests      int64
	// ByModel splits the counts by model (an agent switches models; its
	// subagents run others), for their cost.
	ByModel []ModelTokens
	// HaveReasoning and HaveServerTools say whether the format stated
	// reasoning tokens (Codex) and server tool requests (Claude Code's
	// server_tool_use) at all.
	HaveReasoning   bool
	HaveServerTools bool
	// Turns counts the prompts the person sent: not local commands, bash
	// mode, compaction summaries or interruptions.
	Turns int
	// Compactions counts the compactions (Claude Code's compact_boundary).
	Compactions int
	// APIErrors counts the model calls that failed for good (Claude Code's
	// <synthetic> isApiErrorMessage lines); LastError is the last one's
	// kind ("rate_limit", "server_error", "authentication_failed" ...),
	// LastErrorAt when.
	APIErrors   int
	LastError   string
	LastErrorAt time.Time
	// Title is the session's title: Claude Code's custom-title, else its
	// ai-title, else a summary line's.
	Title string
	// GitBranch, Version and PermissionMode are the last the lines name:
	// the branch of the working directory, the agent's version (Claude
	// Code's version, Codex's cli_version), and Claude Code's permission
	// mode (default, acceptEdits, plan, bypassPermissions).
	GitBranch      string
	Version        string
	PermissionMode string
	// RateLimitPrimaryPercent and RateLimitSecondaryPercent are Codex's
	// rate-limit use (rate_limits.primary/secondary.used_percent, its
	// 5-hour and weekly windows), when HaveRateLimits.
	RateLimitPrimaryPercent   float64
	RateLimitSecondaryPercent float64
	HaveRateLimits            bool
	// LastActivity is the time of the last entry (its timestamp, else when
	// it was read).
	LastActivity time.Time
	// Last is the last entry of the conversation (meta lines aside).
	Last EntryKind
	// PendingTools counts tool uses still awaiting their results;
	// PendingSince is when the oldest of them was asked for;
	// PendingSubagents how many of them started a subagent (Task, Agent).
	PendingTools     int
	PendingSince     time.Time
	PendingSubagents int
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

	pending   []pendingTool // tool uses awaiting results, oldest first
	msgs      messageUsage  // Claude: each recent message id's usage, counted once
	titleRank int8          // Claude: what Title came from: 1 summary, 2 ai-title, 3 custom-title
}

// TokenCounts are cumulative token counts of model calls.
type TokenCounts struct {
	// InputTokens are the uncached input tokens.
	InputTokens int64
	// OutputTokens include thinking (Claude) and reasoning (Codex)
	// tokens: both are billed as output.
	OutputTokens int64
	// CacheReadTokens are input tokens read from the prompt cache.
	CacheReadTokens int64
	// CacheCreationTokens are input tokens written to the prompt cache,
	// of which CacheCreation5mTokens for 5 minutes and
	// CacheCreation1hTokens for an hour (priced differently), when the
	// usage splits them (cache_creation.ephemeral_5m/1h_input_tokens).
	CacheCreationTokens   int64
	CacheCreation5mTokens int64
	CacheCreation1hTokens int64
	// ReasoningTokens are the output tokens spent reasoning, when the
	// format says (Codex's reasoning_output_tokens; Claude Code's usage
	// does not split thinking from output).
	ReasoningTokens int64
	// WebSearchRequests and WebFetchRequests count the server tools'
	// requests (usage.server_tool_use).
	WebSearchRequests int64
	WebFetchRequests  int64
}

// Tokens are the transcript's cumulative counts.
func (t *Transcript) Tokens() TokenCounts {
	return TokenCounts{t.InputTokens, t.OutputTokens, t.CacheReadTokens, t.CacheCreationTokens, t.CacheCreation5mTokens,
		t.CacheCreation1hTokens, t.ReasoningTokens, t.WebSearchRequests, t.WebFetchRequests}
}

// addTokens adds sign times u to the transcript's counts.
func (t *Transcript) addTokens(u TokenCounts, sign int64) {
	c := t.Tokens()
	c.add(u, sign)
	t.InputTokens, t.OutputTokens, t.CacheReadTokens, t.CacheCreationTokens = c.InputTokens, c.OutputTokens, c.CacheReadTokens, c.CacheCreationTokens
	t.CacheCreation5mTokens, t.CacheCreation1hTokens, t.ReasoningTokens = c.CacheCreation5mTokens, c.CacheCreation1hTokens, c.ReasoningTokens
	t.WebSearchRequests, t.WebFetchRequests = c.WebSearchRequests, c.WebFetchRequests
}

// add adds sign times u to c.
func (c *TokenCounts) add(u TokenCounts, sign int64) {
	c.InputTokens += sign * u.InputTokens
	c.OutputTokens += sign * u.OutputTokens
	c.CacheReadTokens += sign * u.CacheReadTokens
	c.CacheCreationTokens += sign * u.CacheCreationTokens
	c.CacheCreation5mTokens += sign * u.CacheCreation5mTokens
	c.CacheCreation1hTokens += sign * u.CacheCreation1hTokens
	c.ReasoningTokens += sign * u.ReasoningTokens
	c.WebSearchRequests += sign * u.WebSearchRequests
	c.WebFetchRequests += sign * u.WebFetchRequests
}

// Add adds u to c.
func (c *TokenCounts) Add(u TokenCounts) { c.add(u, 1) }

// EntryKind says what the last entry of a conversation was.
type EntryKind uint8

const (
	EntryNone        EntryKind = iota
	EntryPrompt                // the person's prompt: the model is to answer
	EntryToolResult            // a tool's result: the model is to go on
	EntryToolUse               // the model asked for a tool
	EntryReply                 // the model answered and ended its turn
	EntryInterrupted           // the person interrupted the turn
	EntryAPIError              // the model call failed for good: the turn ended on it
)

func (k EntryKind) String() string {
	return [...]string{"none", "prompt", "tool_result", "tool_use", "reply", "interrupted", "api_error"}[k]
}

// maxMessageIDs bounds the message ids whose usage a transcript keeps: one
// message's lines, and those of messages interleaved with it (older
// Claude Code wrote parallel sidechains into the main file), lie within a
// few dozen lines of each other.
const maxMessageIDs = 256

// messageUsage keeps the usage last counted for each of the recent
// message ids, so that a message written in several lines, even
// interleaved with others, counts once, with its last usage.
type messageUsage struct {
	byID  map[string]messageSeen
	order []string // ids, oldest first, at most maxMessageIDs
	seq   uint64
}

type messageSeen struct {
	u     TokenCounts
	model string
	seq   uint64 // when the id was first seen: later ids are newer messages
}

// addUsage counts one model call's line: a message already counted has
// its counts replaced by this line's. It reports whether the message is
// the newest seen, whose usage then says the context.
func (t *Transcript) addUsage(msgID, model string, u TokenCounts) (newest bool) {
	m := &t.msgs
	m.seq++
	if msgID == "" {
		t.addTokens(u, 1)
		t.ByModel = addModelTokens(t.ByModel, model, u, 1)
		return true
	}
	if m.byID == nil {
		m.byID = make(map[string]messageSeen)
	}
	prev, seen := m.byID[msgID]
	if seen {
		t.addTokens(prev.u, -1)
		t.ByModel = addModelTokens(t.ByModel, prev.model, prev.u, -1)
		prev.u, prev.model = u, model
		m.byID[msgID] = prev
		t.addTokens(u, 1)
		t.ByModel = addModelTokens(t.ByModel, model, u, 1)
		return prev.seq >= m.newest()
	}
	if len(m.order) >= maxMessageIDs {
		delete(m.byID, m.order[0])
		m.order = m.order[1:]
	}
	m.order = append(m.order, msgID)
	m.byID[msgID] = messageSeen{u, model, m.seq}
	t.addTokens(u, 1)
	t.ByModel = addModelTokens(t.ByModel, model, u, 1)
	return true
}

// ModelTokens are cumulative counts of one model's calls.
type ModelTokens struct {
	Model string
	TokenCounts
}

// maxModels bounds the models counted apart per transcript; the calls of
// more are counted under the model "".
const maxModels = 16

// addModelTokens adds sign times u to model's counts in by.
func addModelTokens(by []ModelTokens, model string, u TokenCounts, sign int64) []ModelTokens {
	i := slices.IndexFunc(by, func(m ModelTokens) bool { return m.Model == model })
	if i < 0 && len(by) >= maxModels {
		model = ""
		i = slices.IndexFunc(by, func(m ModelTokens) bool { return m.Model == "" })
	}
	if i < 0 {
		by = append(by, ModelTokens{Model: model})
		i = len(by) - 1
	}
	by[i].add(u, sign)
	return by
}

// newest is when the newest message id was first seen.
func (m *messageUsage) newest() uint64 {
	if len(m.order) == 0 {
		return 0
	}
	return m.byID[m.order[len(m.order)-1]].seq
}

// maxPendingTools bounds the tool uses remembered: a model asks for a few
// at once; a transcript naming thousands is not one to trust for "blocked".
const maxPendingTools = 64

// pendingTool is a tool use awaiting its result.
type pendingTool struct {
	id       string
	subagent bool // it started a subagent (Claude Code's Task, Agent)
}

func (t *Transcript) toolUse(id string, subagent bool, at time.Time) {
	if len(t.pending) == 0 {
		t.PendingSince = at
	}
	if len(t.pending) < maxPendingTools {
		t.pending = append(t.pending, pendingTool{id, subagent})
	}
	t.countPending()
}

func (t *Transcript) toolResult(id string) {
	for i, p := range t.pending {
		if p.id == id {
			t.pending = append(t.pending[:i], t.pending[i+1:]...)
			break
		}
	}
	t.countPending()
}

func (t *Transcript) clearPending() {
	t.pending = t.pending[:0]
	t.PendingSince = time.Time{}
	t.countPending()
}

func (t *Transcript) countPending() {
	t.PendingTools, t.PendingSubagents = len(t.pending), 0
	for _, p := range t.pending {
		if p.subagent {
			t.PendingSubagents++
		}
	}
}

// shared returns a copy of t that shares nothing with t's parser state.
func (t *Transcript) shared() *Transcript {
	c := *t
	c.pending, c.msgs = nil, messageUsage{}
	c.ByModel = slices.Clone(t.ByModel)
	return &c
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
	// head and tail are the file's first bytes and those before what was
	// read, as read: another content there means the file was rewritten.
	head, tail []byte
	t          Transcript
}

// printLen is how many bytes of a file's head and of the tail of what was
// read are kept to tell a rewritten file from one appended to.
const printLen = 64

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
	if file.Dev != f.dev || file.Ino != f.ino || file.Size < f.offset+int64(len(f.line)) || file.Size > f.offset+int64(len(f.line)) && f.rewritten(file) {
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
	f.keepPrints(file, end)
	if end == start {
		// Nothing read: not growth, and the error says why.
		return false, buf, fmt.Errorf("reading %s: %w", f.path, readErr)
	}
	f.grew = now // what was read stands; a failure past it is met next gather
	return true, buf, nil
}

// rewritten reports whether the file, grown since the last read, holds
// other bytes at its head or before the end of what was read: truncated
// and written again, longer, between two gathers. Appending never changes
// them.
func (f *transcriptFile) rewritten(file *fsio.UserFile) bool {
	end := f.offset + int64(len(f.line))
	if end == 0 {
		return false
	}
	var b [printLen]byte
	if n, _ := file.ReadAt(b[:len(f.head)], 0); !bytes.Equal(b[:n], f.head) {
		return true
	}
	n, _ := file.ReadAt(b[:len(f.tail)], end-int64(len(f.tail)))
	return !bytes.Equal(b[:n], f.tail)
}

// keepPrints keeps the file's head and the bytes before end, what was read.
func (f *transcriptFile) keepPrints(file *fsio.UserFile, end int64) {
	if len(f.head) < printLen && end > int64(len(f.head)) {
		b := make([]byte, min(end, printLen))
		n, _ := file.ReadAt(b, 0)
		f.head = b[:n]
	}
	from := max(end-printLen, 0)
	if cap(f.tail) < printLen {
		f.tail = make([]byte, 0, printLen)
	}
	n, _ := file.ReadAt(f.tail[:end-from], from)
	f.tail = f.tail[:n]
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
