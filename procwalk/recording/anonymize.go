//go:build linux

package recording

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"reflect"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/session"
)

// anonymize.go hides who ran what on a recorded host, so that a recording
// can go into a bug report: every name, command line, user and path is
// replaced by a keyed hash of it, the same hash for the same text across
// the recording (a session named after its user still is; a process's
// argv[0] still ends in the hash of its comm), and numbers stay as they
// were, so rules replay as they would have. The key is random and never
// written: the hashes cannot be reversed by hashing guesses.

// Anonymizer rewrites frames. Not safe for concurrent use.
type Anonymizer struct {
	key   []byte
	cache map[string]string
}

// maxCached bounds the Anonymizer's memory of hashes it made (a host whose
// command lines never repeat would grow it without end); the hash of a
// string is the same after the cache is cleared.
const maxCached = 1 << 16

// NewAnonymizer returns an Anonymizer with a key of its own.
func NewAnonymizer() *Anonymizer {
	key := make([]byte, 32)
	rand.Read(key) // never fails (crypto/rand's contract since Go 1.24)
	return &Anonymizer{key: key, cache: make(map[string]string)}
}

// token spells the first tokenLen*5 bits of sum as base32 does (RFC 4648:
// 5 bits a character, from the first byte's high bits on), in lower-case
// letters and digits: a hash is a valid comm, path component, tmux name
// and line-protocol tag. (Package encoding/base32 would build its tables
// in every procwalk process's start, for ten characters.)
func token(sum []byte) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	var b [tokenLen]byte
	for i := range b {
		bit := i * 5
		window := uint(sum[bit/8])<<8 | uint(sum[bit/8+1]) // the 5 bits lie in these 16
		b[i] = alphabet[window>>(11-bit%8)&31]
	}
	return string(b[:])
}

// tokenLen is a hash's length in characters (5 bits each): 50 bits, no
// clash expected among millions of distinct names; with the leading "x",
// 11 bytes, within comm's 15.
const tokenLen = 10

// String returns s anonymized: "" and decimal numbers as they are; a path
// component by component ("/home/alice/src" is "/xk3.../xq7.../xa2..."),
// keeping "." and ".." and a trailing " (deleted)"; anything else as one
// hash.
func (a *Anonymizer) String(s string) string {
	if s == "" || isNumber(s) {
		return s
	}
	if h, ok := a.cache[s]; ok {
		return h
	}
	var h string
	switch {
	case strings.HasSuffix(s, deletedSuffix):
		h = a.String(strings.TrimSuffix(s, deletedSuffix)) + deletedSuffix
	case strings.HasPrefix(s, "/"):
		parts := strings.Split(s, "/")
		for i, p := range parts {
			if p != "." && p != ".." {
				parts[i] = a.String(p)
			}
		}
		h = strings.Join(parts, "/")
	default:
		m := hmac.New(sha256.New, a.key)
		m.Write([]byte(s))
		h = "x" + token(m.Sum(nil))
	}
	if len(a.cache) >= maxCached {
		clear(a.cache)
	}
	a.cache[s] = h
	return h
}

// deletedSuffix is what the kernel appends to the exe link of a replaced
// executable: kept, rules look for it.
const deletedSuffix = " (deleted)"

func isNumber(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Frame returns f anonymized, sharing nothing f's strings live in: f is
// left as it was (a pipeline's frame is its memory). Grouping notes and
// the source's note, free text that may name anything, are dropped.
func (a *Anonymizer) Frame(f frame.Frame) frame.Frame {
	f.Check()
	snap := *f.Snapshot
	snap.Procs = make([]procwalk.Process, len(f.Snapshot.Procs))
	for i := range snap.Procs {
		p := f.Snapshot.Procs[i]
		p.Comm = a.String(p.Comm)
		if p.Cmdline != nil {
			args := make([]string, len(p.Cmdline))
			for j, arg := range p.Cmdline {
				args[j] = a.String(arg)
			}
			p.Cmdline = args
		}
		p.Exe, p.Cwd = a.String(p.Exe), a.String(p.Cwd)
		if p.Cgroups != nil {
			cg := make([]procwalk.CgroupLine, len(p.Cgroups))
			for j, c := range p.Cgroups {
				c.Path = a.String(c.Path) // Controllers are the kernel's names
				cg[j] = c
			}
			p.Cgroups = cg
		}
		snap.Procs[i] = p
	}
	snap.SourceNote = ""
	out := frame.Frame{Snapshot: &snap, System: f.System, Generation: f.Generation}
	if f.Sessions != nil {
		out.Sessions = make([]session.Session, len(f.Sessions))
		for i := range f.Sessions {
			out.Sessions[i] = a.rewrite(reflect.ValueOf(f.Sessions[i]), "").Interface().(session.Session)
		}
	}
	return out
}

// keptFields are fields of a session (and what it holds) whose strings
// are procwalk's own words, not names: kinds, statuses, the rule that
// decided one, a model's name, tmux's pane ids ("%3"). Every other string
// is hashed, including those of fields added later.
func keptField(name string) bool {
	switch name {
	case "Kind", "Status", "Why", "Model", "PaneID", "Controllers":
		return true
	}
	return false
}

// keptAttr are session attributes whose values are numbers or procwalk's
// own words (session.Attr*).
func keptAttr(key string) bool {
	switch key {
	case session.AttrPanes, session.AttrWindows, session.AttrAttached, session.AttrCgroupVer, session.AttrQoS,
		session.AttrUID, session.AttrAgent, session.AttrElapsed, session.AttrNested,
		session.AttrRule, session.AttrStatus, session.AttrModel:
		return true
	}
	return false
}

// isTime reports whether t is time.Time, an opaque value here.
func isTime(t reflect.Type) bool { return t == reflect.TypeFor[time.Time]() }

// rewrite returns a copy of v with every string hashed but those of kept
// fields (field: the name of the struct field v is, "" for none) and kept
// attributes; unexported fields are dropped (an encoded frame has none).
func (a *Anonymizer) rewrite(v reflect.Value, field string) reflect.Value {
	t := v.Type()
	if !holdsStrings(t, map[reflect.Type]bool{}) {
		return v
	}
	switch t.Kind() {
	case reflect.String:
		if keptField(field) {
			return v
		}
		return reflect.ValueOf(a.String(v.String())).Convert(t)
	case reflect.Struct:
		out := reflect.New(t).Elem()
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() {
				out.Field(i).Set(a.rewrite(v.Field(i), f.Name))
			}
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(t.Elem())
		out.Elem().Set(a.rewrite(v.Elem(), field))
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(t, v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(a.rewrite(v.Index(i), field))
		}
		return out
	case reflect.Array:
		out := reflect.New(t).Elem()
		for i := range v.Len() {
			out.Index(i).Set(a.rewrite(v.Index(i), field))
		}
		return out
	case reflect.Interface:
		return reflect.Zero(t) // what it holds is unknown here: dropped
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(t, v.Len())
		iter := v.MapRange()
		for iter.Next() {
			k, e := iter.Key(), iter.Value()
			if t.Key().Kind() != reflect.String || !keptAttr(k.String()) {
				e = a.rewrite(e, field)
			}
			if t.Key().Kind() == reflect.String && field != "Attrs" {
				k = a.rewrite(k, field) // map keys that are not procwalk's attribute names
			}
			out.SetMapIndex(k, e)
		}
		return out
	}
	return v // numbers, booleans
}

// holdsStrings reports whether values of t can hold a string; seen stops
// the walk at recursive types.
func holdsStrings(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.String:
		return true
	case reflect.Struct:
		if isTime(t) {
			return false
		}
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && holdsStrings(f.Type, seen) {
				return true
			}
		}
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return holdsStrings(t.Elem(), seen)
	case reflect.Map:
		return holdsStrings(t.Key(), seen) || holdsStrings(t.Elem(), seen)
	case reflect.Interface:
		return true
	}
	return false
}
