//go:build linux

package main

import (
	"embed"
	"strings"
)

// The commands' long help is help/NAME.txt, plain text as --help prints
// it, "{{exit codes}}" standing for help/exit-codes.txt.

//go:embed help/*.txt
var helpFiles embed.FS

// helpText is the long help of command name.
func helpText(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("procwalk: no help text " + name + ": " + err.Error()) // the files are built in
	}
	text := string(b)
	if strings.Contains(text, "{{exit codes}}") {
		text = strings.ReplaceAll(text, "{{exit codes}}", helpText("exit-codes"))
	}
	return text
}
