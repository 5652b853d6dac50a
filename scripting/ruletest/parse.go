//go:build linux

package ruletest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parse.go reads a rule test file (the format is in doc.go): one statement
// a line, processes indented under their parent and session.

// ErrSyntax wraps every error of a test file that does not parse: its
// message starts with "FILE:LINE:".
var ErrSyntax = errors.New("rule test syntax")

// Test is a parsed rule test file.
type Test struct {
	Path string
	// Rule names the script: a bundled script's name, or a path (relative
	// to the test file's folder when it is); Args are its arguments.
	Rule string
	Args []string
	// Mode is the script's procwalk.mode: "watch" (one state across the
	// frames, as watch) or "run" (each frame a run of its own).
	Mode string
	// Replay is a recording whose frames are the input, relative to the
	// test file's folder; else Frames describe them.
	Replay string
	Users  map[string]int
	Host   hostSpec
	Frames []frameSpec
	Expect []Expectation
}

type hostSpec struct {
	cpus     int
	memBytes uint64
}

// frameSpec is an "at" block, or a frame an "every" line repeats.
type frameSpec struct {
	at    time.Duration
	line  int
	lines []statement // in the order written
}

// statement is one line of a frame: a session, a process or an exit, at
// an indentation depth.
type statement struct {
	line   int
	indent int
	kind   string // "session", "proc", "exit"
	ref    string // session: KIND:NAME
	pid    int
	comm   string
	keys   []keyValue
}

type keyValue struct {
	key, value string
	regexp     bool // key~value
}

// Expectation is an "expect" line: at time At, an alert, kill or emitted
// metric with those keys, or a printed or logged line holding Text.
type Expectation struct {
	At          time.Duration
	Line        int
	What        string // alert, kill, emit, print, log
	Measurement string // emit
	Text        string // print, log
	Keys        []keyValue
}

// Parse reads a rule test.
func Parse(path string, src []byte) (*Test, error) {
	t := &Test{Path: path, Mode: "watch", Users: map[string]int{}, Host: hostSpec{cpus: 4, memBytes: 16 << 30}}
	p := parser{t: t, path: path}
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		p.n++
		if err := p.line(sc.Text()); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSyntax, path, err)
	}
	switch {
	case t.Rule == "":
		return nil, fmt.Errorf("%w: %s: no rule line (rule NAME [-- ARGS])", ErrSyntax, path)
	case t.Replay == "" && len(t.Frames) == 0:
		return nil, fmt.Errorf("%w: %s: no frames: write 'at 0s' blocks, or 'replay FILE'", ErrSyntax, path)
	case t.Replay != "" && len(t.Frames) > 0:
		return nil, fmt.Errorf("%w: %s: frames come from 'replay' or from 'at' blocks, not both", ErrSyntax, path)
	}
	return t, nil
}

type parser struct {
	t    *Test
	path string
	n    int
	cur  *frameSpec // the "at" block being read
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s:%d: %s", ErrSyntax, p.path, p.n, fmt.Sprintf(format, args...))
}

func (p *parser) line(raw string) error {
	body, _ := cutComment(raw)
	if strings.TrimSpace(body) == "" {
		return nil
	}
	indent := len(body) - len(strings.TrimLeft(body, " \t"))
	words, err := split(body)
	if err != nil {
		return p.errorf("%v", err)
	}
	if indent > 0 {
		if p.cur == nil {
			return p.errorf("an indented line belongs to an 'at' block: write 'at 0s' above it")
		}
		return p.frameLine(indent, words)
	}
	p.cur = nil
	switch words[0] {
	case "rule":
		if len(words) < 2 {
			return p.errorf("rule NAME [-- ARGS]: name a bundled script or a file")
		}
		p.t.Rule = words[1]
		rest := words[2:]
		if len(rest) > 0 {
			if rest[0] != "--" {
				return p.errorf("the rule's arguments go after --: rule %s -- %s", words[1], strings.Join(rest, " "))
			}
			p.t.Args = rest[1:]
		}
	case "mode":
		if len(words) != 2 || (words[1] != "watch" && words[1] != "run") {
			return p.errorf("mode watch or mode run")
		}
		p.t.Mode = words[1]
	case "replay":
		if len(words) != 2 {
			return p.errorf("replay FILE: one recording")
		}
		p.t.Replay = words[1]
	case "user":
		if len(words) != 3 {
			return p.errorf("user NAME UID")
		}
		uid, err := strconv.Atoi(words[2])
		if err != nil || uid < 0 {
			return p.errorf("user %s %s: the uid is a number", words[1], words[2])
		}
		p.t.Users[words[1]] = uid
	case "host":
		for _, w := range words[1:] {
			kv, err := keyOf(w)
			if err != nil {
				return p.errorf("%v", err)
			}
			switch kv.key {
			case "cpus":
				n, err := strconv.Atoi(kv.value)
				if err != nil || n < 1 {
					return p.errorf("host cpus=%s: a number of CPUs", kv.value)
				}
				p.t.Host.cpus = n
			case "mem":
				n, err := parseSize(kv.value)
				if err != nil {
					return p.errorf("host mem=%s: %v", kv.value, err)
				}
				p.t.Host.memBytes = n
			default:
				return p.errorf("host takes cpus= and mem=, not %s", kv.key)
			}
		}
	case "at":
		if len(words) != 2 {
			return p.errorf("at TIME: the time of a frame from the first, such as 0s, 90s, 5m")
		}
		at, err := parseTime(words[1])
		if err != nil {
			return p.errorf("%v", err)
		}
		if err := p.after(at); err != nil {
			return err
		}
		p.t.Frames = append(p.t.Frames, frameSpec{at: at, line: p.n})
		p.cur = &p.t.Frames[len(p.t.Frames)-1]
	case "every":
		// every STEP until TIME: frames as the last one, STEP apart.
		if len(words) != 4 || words[2] != "until" {
			return p.errorf("every STEP until TIME, such as every 1m until 10m")
		}
		step, err1 := parseTime(words[1])
		end, err2 := parseTime(words[3])
		if err := errors.Join(err1, err2); err != nil {
			return p.errorf("%v", err)
		}
		if step <= 0 || len(p.t.Frames) == 0 {
			return p.errorf("every needs a step above 0 and an 'at' block before it")
		}
		last := p.t.Frames[len(p.t.Frames)-1].at
		if end < last+step {
			return p.errorf("every %s until %s: the last frame is at %s already", words[1], words[3], fmtTime(last))
		}
		if n := (end - last) / step; n > maxFrames {
			return p.errorf("every %s until %s makes %d frames; at most %d", words[1], words[3], n, maxFrames)
		}
		for at := last + step; at <= end; at += step {
			p.t.Frames = append(p.t.Frames, frameSpec{at: at, line: p.n})
		}
	case "expect":
		return p.expect(words)
	default:
		return p.errorf("unknown statement %q: rule, mode, user, host, replay, at, every or expect", words[0])
	}
	if len(p.t.Frames) > maxFrames {
		return p.errorf("more than %d frames", maxFrames)
	}
	return nil
}

// maxFrames bounds a test's frames: a day at a frame a minute and more.
const maxFrames = 100_000

func (p *parser) after(at time.Duration) error {
	if n := len(p.t.Frames); n > 0 && at <= p.t.Frames[n-1].at {
		return p.errorf("at %s: frames go forward in time; the last was at %s", fmtTime(at), fmtTime(p.t.Frames[n-1].at))
	}
	return nil
}

// frameLine reads a line of an "at" block.
func (p *parser) frameLine(indent int, words []string) error {
	st := statement{line: p.n, indent: indent}
	switch words[0] {
	case "session":
		if len(words) < 2 || !strings.Contains(words[1], ":") {
			return p.errorf("session KIND:NAME [key=value ...]")
		}
		st.kind, st.ref = "session", words[1]
		words = words[2:]
	case "exit":
		if len(words) != 2 {
			return p.errorf("exit PID")
		}
		pid, err := strconv.Atoi(words[1])
		if err != nil || pid <= 0 {
			return p.errorf("exit %s: a pid", words[1])
		}
		st.kind, st.pid = "exit", pid
		p.cur.lines = append(p.cur.lines, st)
		return nil
	default:
		pid, err := strconv.Atoi(words[0])
		if err != nil || pid <= 0 {
			return p.errorf("%q: a frame's lines are 'session KIND:NAME', 'PID [COMM] [key=value ...]' or 'exit PID'", words[0])
		}
		st.kind, st.pid = "proc", pid
		words = words[1:]
		if len(words) > 0 && !strings.ContainsAny(words[0], "=~") {
			st.comm, words = words[0], words[1:]
		}
	}
	for _, w := range words {
		kv, err := keyOf(w)
		if err != nil {
			return p.errorf("%v", err)
		}
		st.keys = append(st.keys, kv)
	}
	p.cur.lines = append(p.cur.lines, st)
	return nil
}

// expect reads "expect TIME WHAT ...".
func (p *parser) expect(words []string) error {
	if len(words) < 3 {
		return p.errorf("expect TIME alert|kill|emit MEASUREMENT|print TEXT|log TEXT [key=value ...]")
	}
	at, err := parseTime(words[1])
	if err != nil {
		return p.errorf("%v", err)
	}
	e := Expectation{At: at, Line: p.n, What: words[2]}
	rest := words[3:]
	switch e.What {
	case "alert", "kill":
	case "emit":
		if len(rest) == 0 || strings.ContainsAny(rest[0], "=~") {
			return p.errorf("expect %s emit MEASUREMENT [key=value ...]", words[1])
		}
		e.Measurement, rest = rest[0], rest[1:]
	case "print", "log":
		if len(rest) != 1 {
			return p.errorf("expect %s %s TEXT: one text, quoted when it has spaces", words[1], e.What)
		}
		e.Text, rest = rest[0], nil
	default:
		return p.errorf("expect %s %s: want alert, kill, emit, print or log", words[1], e.What)
	}
	for _, w := range rest {
		kv, err := keyOf(w)
		if err != nil {
			return p.errorf("%v", err)
		}
		e.Keys = append(e.Keys, kv)
	}
	p.t.Expect = append(p.t.Expect, e)
	return nil
}

// cutComment drops a # comment (outside quotes).
func cutComment(s string) (string, bool) {
	in := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if in {
				i++
			}
		case '"':
			in = !in
		case '#':
			if !in {
				return s[:i], true
			}
		}
	}
	return s, false
}

// split splits a line into words at spaces; a double-quoted part (Go's
// escapes) is one word or the value of key="...".
func split(s string) ([]string, error) {
	var out []string
	var b strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				out = append(out, b.String())
				b.Reset()
				inWord = false
			}
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' {
					j++
				}
			}
			if j >= len(s) {
				return nil, fmt.Errorf("a quote is not closed: %s", s[i:])
			}
			u, err := strconv.Unquote(s[i : j+1])
			if err != nil {
				return nil, fmt.Errorf("%s: %v", s[i:j+1], err)
			}
			b.WriteString(u)
			inWord = true
			i = j
		default:
			b.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, b.String())
	}
	return out, nil
}

// keyOf reads key=value or key~regexp.
func keyOf(w string) (keyValue, error) {
	i := strings.IndexAny(w, "=~")
	if i <= 0 {
		return keyValue{}, fmt.Errorf("%q: want key=value", w)
	}
	return keyValue{key: w[:i], value: w[i+1:], regexp: w[i] == '~'}, nil
}

// parseTime reads a time from the first frame: "0", "0s", "90s", "5m".
func parseTime(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(strings.TrimPrefix(s, "+"))
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q: a time from the first frame, such as 0s, 90s, 5m, 1h30m", s)
	}
	return d, nil
}

// fmtTime prints a time from the first frame: "0s", "1m30s".
func fmtTime(d time.Duration) string { return d.String() }
