//go:build linux

package scripting

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"
)

// emit.go is procwalk.emit, procwalk.log and procwalk.alert. Emitted lines
// go to the host's line-protocol stream through an Emitter; logs and alerts
// go to a structured logger (stderr), never to stdout.

// Emitter writes one metric to the output stream. It must write whole lines
// only, sanitizing or refusing what line protocol cannot carry; cmd/ wires
// it to the plugin's encoder.
type Emitter interface {
	Emit(measurement string, tags map[string]string, fields map[string]any, t time.Time) error
}

// alertMeasurement is the measurement of procwalk.alert.
const alertMeasurement = "procwalk_alert"

var errNoEmitter = errors.New("no output stream: emit works under procwalk run, watch and telegraf")

// procwalk.emit(measurement, tags, fields) -> true | nil, err. Tags are
// strings (numbers and booleans are converted); fields are numbers (written
// as floats: Lua has one number type and a field's type must never
// change), booleans or strings. The time is the snapshot's.
func (m *module) luaEmit(L *lua.LState) int {
	measurement := L.CheckString(1)
	if measurement == "" {
		L.ArgError(1, "measurement must not be empty")
	}
	if reservedMeasurement(measurement) {
		L.ArgError(1, fmt.Sprintf("measurement %s is reserved: procwalk and procwalk_* are procwalk's own (procwalk_alert is written by procwalk.alert)", measurement))
	}
	if strings.HasPrefix(measurement, "#") {
		L.ArgError(1, "a measurement must not start with # (line protocol reads the line as a comment)")
	}
	tags := tagMap(L, 2)
	fields := fieldMap(L, 3)
	if len(fields) == 0 {
		L.ArgError(3, "at least one field is needed")
	}
	m.r.checkMetricSize(L, "procwalk.emit", tags, fields)
	m.r.spendMetric(L, MetricBytes(measurement, tags, fields))
	return m.emit(L, measurement, tags, fields)
}

// reservedMeasurement reports whether name is one of procwalk's own
// measurements (procwalk, procwalk_action, procwalk_alert, procwalk_session
// ...), which a script must not forge.
func reservedMeasurement(name string) bool {
	return name == "procwalk" || strings.HasPrefix(name, "procwalk_")
}

func (m *module) emit(L *lua.LState, measurement string, tags map[string]string, fields map[string]any) int {
	if m.r.cfg.Emitter == nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(errNoEmitter.Error()))
		return 2
	}
	if err := m.r.cfg.Emitter.Emit(measurement, tags, fields, m.snap.Time); err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(fmt.Sprintf("emit %s: %v", measurement, err)))
		return 2
	}
	L.Push(lua.LTrue)
	return 1
}

// checkMetricSize bounds one metric (and its log record): a table of a
// thousand fields holding one 4 MiB string would make a 4 GiB line.
func (r *Runtime) checkMetricSize(L *lua.LState, fn string, tags map[string]string, fields map[string]any) {
	size := 0
	for k, v := range tags {
		size += len(k) + len(v)
	}
	for k, v := range fields {
		size += len(k) + 24 // a number's or boolean's text
		if s, ok := v.(string); ok {
			size += len(s)
		}
	}
	r.checkSize(L, fn, float64(size))
}

// tagMap reads a table of tags at argument n (nil means none).
func tagMap(L *lua.LState, n int) map[string]string {
	t := optTable(L, n)
	tags := make(map[string]string)
	if t == nil {
		return tags
	}
	t.ForEach(func(k, v lua.LValue) {
		key, ok := k.(lua.LString)
		if !ok || key == "" {
			L.ArgError(n, fmt.Sprintf("tag names must be non-empty strings, got %s", k.String()))
		}
		switch v.(type) {
		case lua.LString, lua.LNumber, lua.LBool:
			tags[string(key)] = v.String()
		default:
			L.ArgError(n, fmt.Sprintf("tag %s must be a string, got %s", key, typeName(v)))
		}
	})
	return tags
}

// fieldMap reads a table of fields at argument n.
func fieldMap(L *lua.LState, n int) map[string]any {
	t := L.CheckTable(n)
	fields := make(map[string]any)
	t.ForEach(func(k, v lua.LValue) {
		key, ok := k.(lua.LString)
		if !ok || key == "" {
			L.ArgError(n, fmt.Sprintf("field names must be non-empty strings, got %s", k.String()))
		}
		fields[string(key)] = fieldValue(L, n, "field "+string(key), v)
	})
	return fields
}

// fieldValue converts the value of a field (what names it in errors) at
// argument n: a number, boolean or string line protocol can carry.
func fieldValue(L *lua.LState, n int, what string, v lua.LValue) any {
	switch v := v.(type) {
	case lua.LNumber:
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			L.ArgError(n, fmt.Sprintf("%s is %v: line protocol has no NaN or infinity", what, v))
		}
		return float64(v)
	case lua.LBool:
		return bool(v)
	case lua.LString:
		return string(v)
	}
	L.ArgError(n, fmt.Sprintf("%s must be a number, boolean or string, got %s", what, typeName(v)))
	return nil
}

// procwalk.log(...): the arguments, converted with tostring and joined by
// spaces, as an info record on stderr.
func (m *module) luaLog(L *lua.LState) int {
	msg := m.r.joinArgs(L, "procwalk.log", " ")
	m.r.spendText(L, len(msg))
	m.r.cfg.Logger.Info(msg, "script", m.script.Name)
	return 0
}

// alertLevels maps alert levels to log levels.
func alertLevels() map[string]slog.Level {
	return map[string]slog.Level{"info": slog.LevelInfo, "warning": slog.LevelWarn, "critical": slog.LevelError}
}

// procwalk.alert{message=, level=, session=, process=, value=, threshold=,
// ...} -> true: a structured record on stderr and, when there is an output
// stream, a procwalk_alert line tagged rule, severity (the level) and
// kind and session. level is
// info, warning (default) or critical; session is a session or "KIND:NAME";
// process a process; other keys with numbers, booleans or strings become
// fields.
func (m *module) luaAlert(L *lua.LState) int {
	t := L.CheckTable(1)
	level := "warning"
	tags := map[string]string{"rule": m.script.Name}
	fields := map[string]any{}
	var attrs []any
	t.ForEach(func(k, v lua.LValue) {
		key, ok := k.(lua.LString)
		if !ok {
			L.ArgError(1, fmt.Sprintf("alert keys must be strings, got %s", k.String()))
		}
		switch key {
		case "level":
			level = v.String()
			if _, ok := alertLevels()[level]; !ok {
				L.ArgError(1, fmt.Sprintf("alert level must be info, warning or critical; got %q", level))
			}
		case "session":
			kind, name := alertSession(L, v)
			tags["kind"], tags["session"] = kind, name // as in procwalk_session
		case "rule", "kind", "severity":
			L.ArgError(1, fmt.Sprintf("alert key %s is reserved: procwalk sets it", key))
		case "process":
			ref := checkProcessValue(L, v)
			fields["pid"] = int64(ref.p.ID.PID)
			fields["comm"] = ref.p.Comm
		default:
			fields[string(key)] = fieldValue(L, 1, "alert "+string(key), v)
		}
	})
	msg, ok := fields["message"].(string)
	if !ok || msg == "" {
		L.ArgError(1, "alert needs a message string")
	}
	tags["severity"] = level
	size := MetricBytes(alertMeasurement, tags, fields)
	m.r.checkMetricSize(L, "procwalk.alert", tags, fields)
	m.r.spendText(L, size)
	if m.r.cfg.Emitter != nil {
		m.r.spendMetric(L, size)
	}
	for _, k := range sortedKeys(tags) {
		if k != "rule" {
			attrs = append(attrs, k, tags[k])
		}
	}
	for _, k := range sortedKeys(fields) {
		if k != "message" {
			attrs = append(attrs, k, fields[k])
		}
	}
	m.r.cfg.Logger.Log(m.ctx, alertLevels()[level], msg, append([]any{"script", m.script.Name, "alert", true}, attrs...)...)
	if m.r.cfg.Emitter != nil {
		if err := m.r.cfg.Emitter.Emit(alertMeasurement, tags, fields, m.snap.Time); err != nil {
			m.r.cfg.Logger.Warn("cannot emit alert", "script", m.script.Name, "err", err)
		}
	}
	L.Push(lua.LTrue)
	return 1
}

// alertSession reads a session or "KIND:NAME".
func alertSession(L *lua.LState, v lua.LValue) (kind, name string) {
	if ud, ok := v.(*lua.LUserData); ok {
		if ref, ok := ud.Value.(*sessionRef); ok {
			return ref.s.Kind, ref.s.Name
		}
	}
	if s, ok := v.(lua.LString); ok {
		if kind, name, ok := strings.Cut(string(s), ":"); ok && kind != "" && name != "" {
			return kind, name
		}
	}
	L.ArgError(1, "alert session must be a session or \"KIND:NAME\", got "+v.String())
	return "", ""
}

func checkProcessValue(L *lua.LState, v lua.LValue) *procRef {
	if ud, ok := v.(*lua.LUserData); ok {
		if ref, ok := ud.Value.(*procRef); ok {
			return ref
		}
	}
	L.ArgError(1, "alert process must be a process, got "+typeName(v))
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// AlertMeasurement is the measurement of the metric procwalk.alert emits.
const AlertMeasurement = alertMeasurement
