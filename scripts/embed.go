// Package scripts holds the Lua scripts bundled with procwalk, embedded in
// the binary. `procwalk run NAME` runs one; `procwalk run --list` lists them
// with the description each gives in its first line.
package scripts

import (
	"embed"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/procwalk/procwalk/procwalk/textwidth"
)

//go:embed *.lua
var files embed.FS // read-only: embed.FS cannot be changed

// Script is one bundled script.
type Script struct {
	Name        string // "memory-guard": the file name without .lua
	Description string // its first line, without "-- " and "NAME: "
	Source      []byte
}

// List returns every bundled script, by name.
func List() []Script {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil // unreachable: the embedded root always reads
	}
	var out []Script
	for _, e := range entries {
		if s, ok := Lookup(strings.TrimSuffix(e.Name(), ".lua")); ok {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the bundled script called name ("memory-guard", with or
// without ".lua").
func Lookup(name string) (Script, bool) {
	name = strings.TrimSuffix(name, ".lua")
	if name == "" || strings.ContainsAny(name, `/\`) {
		return Script{}, false
	}
	src, err := files.ReadFile(name + ".lua")
	if err != nil {
		return Script{}, false
	}
	return Script{Name: name, Description: describe(name, src), Source: src}, true
}

// describe reads the first line, "-- NAME: what it does".
func describe(name string, src []byte) string {
	line, _, _ := strings.Cut(string(src), "\n")
	line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "--"))
	return strings.TrimSpace(strings.TrimPrefix(line, name+":"))
}

// Names returns the bundled script names, for error messages.
func Names() []string {
	var names []string
	for _, s := range List() {
		names = append(names, s.Name)
	}
	return names
}

// WriteList writes each bundled script's name and what it does, the
// descriptions aligned (procwalk run --list): a line each at width 0 (a
// pipe), else wrapped at spaces to width cells (textwidth.Hang).
func WriteList(w io.Writer, width int) {
	list := List()
	names := 0
	for _, s := range list {
		names = max(names, textwidth.Width(s.Name))
	}
	for _, s := range list {
		for _, l := range textwidth.Hang(s.Name, s.Description, names, width) {
			fmt.Fprintln(w, l)
		}
	}
}
