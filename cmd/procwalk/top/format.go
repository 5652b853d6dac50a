//go:build linux

package top

import (
	"fmt"
	"math"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// absent is what a cell shows for a value that was not read or measured:
// never 0.
const absent = "-"

func bytesCell(v float64, ok bool) string {
	if !ok {
		return absent
	}
	return procwalk.FormatBytes(uint64(math.Max(v, 0)))
}

func rateCell(v float64, ok bool) string {
	if !ok {
		return absent
	}
	return procwalk.FormatBytes(uint64(math.Max(v, 0))) + "/s"
}

// growthCell is a signed MB per minute, as the growth column shows it.
func growthCell(v float64, ok bool) string {
	if !ok {
		return absent
	}
	return fmt.Sprintf("%+.1f", v/1e6)
}

func percentCell(v float64, ok bool) string {
	if !ok {
		return absent
	}
	return fmt.Sprintf("%.1f", v)
}

// ageCell is a short duration: 45s, 12m, 3h04m, 2d03h.
func ageCell(seconds float64) string {
	d := time.Duration(seconds) * time.Second
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}
