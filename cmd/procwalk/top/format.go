//go:build linux

package top

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
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

// growthCell is a signed size per minute, in the units of every size:
// "+1.5 MiB", "-12.0 KiB".
func growthCell(v float64, ok bool) string {
	switch {
	case !ok:
		return absent
	case v < 0:
		return "-" + procwalk.FormatBytes(uint64(-v))
	}
	return "+" + procwalk.FormatBytes(uint64(v))
}

func percentCell(v float64, ok bool) string {
	if !ok {
		return absent
	}
	return fmt.Sprintf("%.1f", v)
}

// metricCell is value v of metric d as a cell, by its unit; absent when
// !ok.
func metricCell(d *metric.Desc, v float64, ok bool) string {
	switch {
	case !ok:
		return absent
	case d.Unit == "bytes":
		return bytesCell(v, true)
	case d.Unit == "bytes/s":
		return rateCell(v, true)
	case d.Unit == "bytes/min":
		return growthCell(v, true)
	case d.Unit == "percent":
		return percentCell(v, true)
	case d.Unit == "seconds":
		return ageCell(v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
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
