//go:build linux

package main

import (
	"context"
	"flag"
	"io"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
)

// man.go is `procwalk man`: the manual page, procwalk(1) in troff, made
// from the same help every --help prints, so the two never disagree.

func newManCommand(root *ffcli.Command, e *env) *ffcli.Command {
	fs := flag.NewFlagSet("man", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &ffcli.Command{
		Name:       "man",
		ShortUsage: "procwalk man > procwalk.1",
		ShortHelp:  "print the manual page (troff) made from every command's help",
		LongHelp:   helpText("man"),
		FlagSet:    fs,
		Exec: func(context.Context, []string) error {
			_, err := io.WriteString(e.stdout, cmdline.ManPage(root, versionLine(), helpText("exit-codes")))
			return err
		},
	}
}
