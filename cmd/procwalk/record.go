//go:build linux

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/recording"
	"github.com/procwalk/procwalk/procwalk/session"
)

// record.go is `procwalk record -o FILE`: the frames of this host, one
// every --interval, into a recording (procwalk/recording) that run, watch
// and top replay and rule tests read.

type recordCommand struct {
	g         *globals
	e         *env
	fs        *flag.FlagSet
	f         sessionFlags
	out       string
	count     int
	kind      string
	anonymize bool
	maxSize   uint64
}

// defaultRecordInterval is record's time between frames when --interval is
// not given: watch's tick, so that a rule replayed over the recording sees
// the frames watch would have run it on.
const defaultRecordInterval = defaultWatchInterval

func newRecordCommand(g *globals, e *env) *ffcli.Command {
	c := &recordCommand{g: g, e: e}
	fs := newFlagSet("record", g, e.stderr)
	iv := fs.Lookup("interval")
	iv.DefValue, iv.Usage = defaultRecordInterval.String(), "time between frames (env PROCWALK_INTERVAL)"
	c.fs = fs
	c.f.register(fs)
	fs.Lookup("no-rates").Usage = "refused: rates are measured between frames"
	cmdline.Path("FILE").String(fs, &c.out, "o", "", "the recording to write (replaced if it exists)")
	fs.IntVar(&c.count, "count", 0, "stop after this many frames (0: until interrupted or --max-size)")
	kindsSpec().String(fs, &c.kind, "kind", "", "session kinds to record, comma-separated: "+strings.Join(session.Kinds(), ", ")+" (default: all)")
	fs.BoolVar(&c.anonymize, "anonymize", false, "hash names, command lines, users and paths, consistently, so that the file can be shared")
	fs.Var(cmdline.NewSize(&c.maxSize, "256MiB", 1<<20, 0, "a size of at least 1MiB, such as 256MiB"), "max-size", "stop before the file passes this size")
	return &ffcli.Command{
		Name:       "record",
		ShortUsage: "procwalk record -o FILE [--count N] [--interval D] [--kind LIST] [--anonymize]",
		ShortHelp:  "record this host's frames into a file, for replaying rules and the live view",
		LongHelp:   helpText("record"),
		FlagSet:    fs,
		Options:    ffOptions(),
		Exec:       c.exec,
	}
}

func (c *recordCommand) exec(ctx context.Context, args []string) error {
	c.g.longRunning = true
	interval, _ := c.g.intervalOr(c.fs, defaultRecordInterval)
	switch {
	case len(args) > 0:
		return usageErrorf("unexpected %q: record takes no arguments (the file is -o FILE)", args[0])
	case c.out == "":
		return usageErrorf("name the recording to write: -o FILE")
	case interval <= 0:
		return usageErrorf("--interval %v: want a positive time between frames such as 10s", interval)
	case c.count < 0:
		return usageErrorf("--count %d: want 0 (no end) or more", c.count)
	case c.f.noRates:
		return usageErrorf("--no-rates does not apply to record: rates are measured between frames")
	}
	var kinds []string
	if c.kind != "" && c.kind != "all" {
		kinds = cmdline.SplitList(c.kind)
	}
	users, _ := c.g.users()
	cfg, err := c.f.groupConfig(kinds, users)
	if err != nil {
		return err
	}
	fsys, err := c.g.openFS()
	if err != nil {
		return err
	}
	grouper, err := session.NewGrouper(fsys, cfg)
	if err != nil {
		return usageErrorf("--kind: %v", err)
	}
	// Every field a rule may ask of a process: a replay cannot read /proc
	// later, as a live run does for the fields its scan left out.
	fields := procwalk.AllFields
	if c.g.pss {
		fields |= procwalk.FieldSmaps
	}
	p, err := c.g.pipeline(frame.Config{Fields: fields, Grouper: grouper, System: true})
	if err != nil {
		return err
	}
	file, err := os.Create(c.out)
	if err != nil {
		return &exitErr{Code: exitError, Err: fmt.Errorf("recording: %w", err)}
	}
	host, _ := os.Hostname()
	h := recording.Header{Procwalk: versionLine(), Created: c.g.clock.Now(), Host: host, IntervalSeconds: interval.Seconds(),
		Kinds: kinds, Fields: fields.String(), Users: recording.UserTable(users)}
	w, err := recording.NewWriter(file, h, recording.Options{MaxBytes: int64(c.maxSize), Anonymize: c.anonymize})
	if err != nil {
		file.Close()
		return &exitErr{Code: exitError, Err: fmt.Errorf("recording to %s: %w", c.out, err)}
	}
	full, err := w.Record(ctx, p, frame.Count(frame.Every(interval, true), c.count))
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &exitErr{Code: exitError, Err: fmt.Errorf("recording to %s: %w (%d frames written)", c.out, err, w.Frames())}
	}
	why := ""
	if full {
		why = ": stopped at --max-size " + c.fs.Lookup("max-size").Value.String()
	}
	fmt.Fprintf(c.e.stderr, "procwalk: recorded %d frames, %s, to %s%s\n", w.Frames(), procwalk.FormatBytes(uint64(w.Size())), printable(c.out), why)
	return nil
}
