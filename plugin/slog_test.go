//go:build linux

package plugin

import (
	"bytes"
	"log/slog"
	"testing"
)

// TestSlogHandler: a script's log records become one marked line each,
// attributes as key=value, names escaped; print's lines are I! lines.
func TestSlogHandler(t *testing.T) {
	var b bytes.Buffer
	l := NewLineLogger(&b, false)
	log := slog.New(&SlogHandler{Log: l}).With("script", "guard.lua")
	log.Warn("killing evil\x1bname", "pid", 42, "why", "over 2 GiB")
	log.Error("failed")
	log.Debug("not shown") // the logger's debug is off
	LinePrinter{Log: l}.Write([]byte("a\tb\x1b\nc\n"))
	want := "W! killing evil\\x1bname script=guard.lua pid=42 why=\"over 2 GiB\"\n" +
		"E! failed script=guard.lua\n" +
		"I! a\tb\\x1b\nI! c\n"
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
