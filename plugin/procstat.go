//go:build linux

package plugin

import (
	"strconv"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// procstat.go emits Telegraf's procstat measurements (plugins/inputs/procstat,
// v1.37, properties "cpu" and "memory", Linux) from one procwalk scan, so
// dashboards built on procstat keep working. Names, types and units follow
// procstat, including its kB for smaps fields; README.md lists the fields
// covered and those that are not.

// procstatLookup is what selects processes and the tag procstat adds for it.
type procstatLookup struct {
	key, value string // "pattern", "exe" or "user" and the configured value
	cfg        *ProcstatConfig
	skipPID    int // never selected (Config.SkipPID)
}

func newProcstatLookup(cfg *ProcstatConfig, skipPID int) procstatLookup {
	l := procstatLookup{key: "pattern", value: ".", cfg: cfg, skipPID: skipPID}
	switch {
	case cfg.Exe != nil:
		l.key, l.value = "exe", cfg.Exe.String()
	case cfg.User != "":
		l.key, l.value = "user", cfg.User
	case cfg.Pattern != nil:
		l.value = cfg.Pattern.String()
	}
	return l
}

// matches reports whether p is selected. As pgrep -f, a pattern matches the
// command line joined by spaces, or the comm when the command line is empty
// (kernel threads, zombies); as pgrep never selects itself, skipPID is
// never selected.
func (l *procstatLookup) matches(p *procwalk.Process, user string, line []byte) bool {
	switch {
	case p.ID.PID == l.skipPID:
		return false
	case l.cfg.Exe != nil:
		return l.cfg.Exe.MatchString(procstatName(p))
	case l.cfg.User != "":
		return user == l.cfg.User
	case l.cfg.Pattern != nil:
		if len(line) == 0 {
			return l.cfg.Pattern.MatchString(p.Comm)
		}
		return l.cfg.Pattern.Match(line)
	}
	return true
}

// procstatName is gopsutil's process name, which procstat tags as
// process_name: the comm, or argv[0]'s base name when the kernel cut the comm
// at 15 bytes and that base name extends it.
func procstatName(p *procwalk.Process) string {
	if len(p.Comm) >= 15 && len(p.Cmdline) > 0 {
		base := p.Cmdline[0]
		if i := strings.LastIndexByte(base, '/'); i >= 0 {
			base = base[i+1:]
		}
		if strings.HasPrefix(base, p.Comm) {
			return base
		}
	}
	return p.Comm
}

// procstatStatus is gopsutil's word for a state letter; procstat writes it
// as the status field.
func procstatStatus(s byte) string {
	switch s {
	case 'R':
		return "running"
	case 'S':
		return "sleep"
	case 'D':
		return "blocked"
	case 'I':
		return "idle"
	case 'T', 't':
		return "stop"
	case 'Z':
		return "zombie"
	case 'W':
		return "wait"
	case 'L':
		return "lock"
	}
	return ""
}

func (l *procstatLookup) tagWith(prop string) bool {
	for _, t := range l.cfg.TagWith {
		if t == prop {
			return true
		}
	}
	return false
}

// writeProcstat writes one procstat line for p.
func writeProcstat(w metricWriter, l *procstatLookup, p *procwalk.Process, h *procwalk.Host, user string, t time.Time) {
	w.begin(MeasurementProcstat)
	w.tag(l.key, l.value)
	w.tag("process_name", procstatName(p))
	// tag_with moves a property from the fields to the tags. With a user
	// lookup the user tag already holds the name: a field of the same name
	// would clash with it in InfluxDB.
	hasCmdline := p.Read&procwalk.FieldCmdline != 0
	tagPID, tagPPID, tagStatus := l.tagWith("pid"), l.tagWith("ppid"), l.tagWith("status")
	tagUser, tagCmdline := l.tagWith("user") || l.key == "user", l.tagWith("cmdline")
	if tagPID {
		w.tag("pid", strconv.Itoa(p.ID.PID))
	}
	if tagPPID {
		w.tag("ppid", strconv.Itoa(p.PPID))
	}
	if tagStatus {
		w.tag("status", procstatStatus(p.State))
	}
	if tagUser && user != "" {
		w.tag("user", user)
	}
	if tagCmdline && hasCmdline {
		w.tag("cmdline", strings.Join(p.Cmdline, " "))
	}
	// Fields. procstat writes pid without its prefix option; we have none.
	if !tagPID {
		w.intField("pid", int64(p.ID.PID))
	}
	if !tagPPID {
		w.intField("ppid", int64(p.PPID))
	}
	if !tagStatus {
		w.stringField("status", procstatStatus(p.State))
	}
	if !tagUser && user != "" {
		w.stringField("user", user)
	}
	if !tagCmdline && hasCmdline {
		w.argsField("cmdline", p.Cmdline)
	}
	w.intField("num_threads", int64(p.Threads))
	if p.Read&procwalk.FieldFDs != 0 {
		w.intField("num_fds", int64(p.FDs))
	}
	if p.Read&procwalk.FieldStatus != 0 {
		w.intField("voluntary_context_switches", bytesInt(p.VoluntaryCtxSwitches))
		w.intField("involuntary_context_switches", bytesInt(p.InvoluntaryCtxSwitches))
	}
	if p.Read&procwalk.FieldIO != 0 {
		// procstat's read_bytes/write_bytes are rchar/wchar (all I/O); the
		// storage-only counters are its disk_read_bytes/disk_write_bytes.
		w.intField("read_count", bytesInt(p.IO.SyscR))
		w.intField("write_count", bytesInt(p.IO.SyscW))
		w.intField("read_bytes", bytesInt(p.IO.RChar))
		w.intField("write_bytes", bytesInt(p.IO.WChar))
		w.intField("disk_read_bytes", bytesInt(p.IO.ReadBytes))
		w.intField("disk_write_bytes", bytesInt(p.IO.WriteBytes))
	}
	// created_at is nanoseconds since the epoch at millisecond precision.
	w.intField("created_at", p.Start.UnixMilli()*int64(time.Millisecond))
	w.floatField("cpu_time_user", p.UserCPUSeconds)
	w.floatField("cpu_time_system", p.SystemCPUSeconds)
	if p.Rates.Measured {
		w.floatField("cpu_usage", p.Rates.CPUPercent)
	}
	w.intField("memory_rss", bytesInt(p.RSSBytes))
	w.intField("memory_vms", bytesInt(p.VSizeBytes))
	if h.MemTotalBytes > 0 {
		w.floatField("memory_usage", 100*float64(p.RSSBytes)/float64(h.MemTotalBytes))
	}
	if p.Read&procwalk.FieldSmaps != 0 {
		// procstat's mmap property reports smaps in kB.
		w.intField("memory_pss", bytesInt(p.Smaps.PSSBytes>>10))
		w.intField("memory_swap", bytesInt(p.Smaps.SwapBytes>>10))
	}
	w.end(t)
}

// writeLookup writes the procstat_lookup line: how many processes matched.
func writeLookup(w metricWriter, l *procstatLookup, matched int, t time.Time) {
	w.begin(MeasurementLookup)
	w.tag(l.key, l.value)
	w.tag("pid_finder", "native")
	w.tag("result", "success")
	w.intField("pid_count", int64(matched))
	w.intField("running", int64(matched))
	w.intField("result_code", 0)
	w.end(t)
}
