//go:build linux

package plugin

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
)

// SlogHandler writes slog records (a script's logs under telegraf --script)
// through a LineLogger: one line each, marked E!, W!, I! or D! by level,
// the attributes as key=value, everything escaped as procwalk prints names
// (a quoted value by strconv.Quote, which escapes the same runes).
type SlogHandler struct {
	Log   *LineLogger
	attrs []slog.Attr
}

func (h *SlogHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *SlogHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(procwalk.Printable(r.Message))
	add := func(a slog.Attr) bool {
		v := a.Value.String()
		if strings.ContainsAny(v, " \t\"=") || v == "" {
			v = strconv.Quote(v)
		}
		fmt.Fprintf(&b, " %s=%s", procwalk.Printable(a.Key), procwalk.Printable(v))
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	switch {
	case r.Level >= slog.LevelError:
		h.Log.Errorf("%s", b.String())
	case r.Level >= slog.LevelWarn:
		h.Log.Warnf("%s", b.String())
	case r.Level >= slog.LevelInfo:
		h.Log.Infof("%s", b.String())
	default:
		h.Log.Debugf("%s", b.String())
	}
	return nil
}

func (h *SlogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &SlogHandler{Log: h.Log, attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

func (h *SlogHandler) WithGroup(string) slog.Handler { return h }

// LinePrinter is a script's print under telegraf --script: an I! line per
// printed line, escaped (procwalk.PrintableLine: a script prints process
// names).
type LinePrinter struct{ Log *LineLogger }

func (p LinePrinter) Write(b []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		p.Log.Infof("%s", procwalk.PrintableLine(line))
	}
	return len(b), nil
}
