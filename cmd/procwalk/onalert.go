//go:build linux

package main

import (
	"flag"
	"time"

	"github.com/procwalk/procwalk/cmd/procwalk/onalert"
)

// onalert.go is watch's flags of --on-alert; package onalert runs the
// commands.

// onAlertFlags are watch's flags of --on-alert.
type onAlertFlags struct{ onalert.Config }

func (f *onAlertFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.Command, "on-alert", "", "run this shell command for each alert, the alert as one JSON object on its stdin (notify-send, logger, curl)")
	fs.DurationVar(&f.Timeout, "on-alert-timeout", 10*time.Second, "how long an --on-alert command may run before it is killed")
	fs.IntVar(&f.Max, "on-alert-max", 10, "the most --on-alert commands started a minute; alerts past it are counted and not sent")
}

// check validates the flags.
func (f *onAlertFlags) check() error {
	switch {
	case f.Command == "":
		return nil
	case f.Timeout <= 0:
		return usageErrorf("--on-alert-timeout %v: want a positive duration such as 10s", f.Timeout)
	case f.Max < 1 || f.Max > 1000:
		return usageErrorf("--on-alert-max %d: want 1 to 1000 commands a minute", f.Max)
	}
	return nil
}
