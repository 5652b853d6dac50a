//go:build linux

package frame

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// codec_v1.go reads processes of encodings 1 and 2, which procwalk wrote
// until the compact encoding 3: recordings made then stay readable.
// Nothing writes them any more; change nothing here but to read them
// better.

// readProcessV1 reads a process of encoding 1, or 2 (startStack: with
// StartStack after DataBytes): every field in a fixed order, floats as 8
// little-endian bytes.
func (d *Decoder) readProcessV1(r *wireReader, p *procwalk.Process, startStack bool) {
	p.ID.PID = r.int()
	p.ID.StartTicks = r.uvarint()
	p.PPID, p.PGRP, p.SID, p.TTY = r.int(), r.int(), r.int(), r.int()
	p.Comm = d.comms.String(r.bytes())
	p.Threads = r.int()
	p.Start = time.Unix(0, r.varint())
	p.State = r.byte()
	flags := r.byte()
	p.Kernel, p.CmdlineTruncated, p.ReadTimedOut = flags&flagKernel != 0, flags&flagCmdlineTruncated != 0, flags&flagReadTimedOut != 0
	p.Rates.Measured, p.Rates.HaveIO, p.Rates.HaveSmaps = flags&flagMeasured != 0, flags&flagHaveIO != 0, flags&flagHaveSmaps != 0
	p.Read, p.Denied, p.Malformed = procwalk.Fields(r.uvarint()), procwalk.Fields(r.uvarint()), procwalk.Fields(r.uvarint())
	for _, v := range [...]*float64{&p.UserCPUSeconds, &p.SystemCPUSeconds, &p.ChildrenUserCPUSeconds, &p.ChildrenSystemCPUSeconds} {
		*v = r.float()
	}
	for _, v := range [...]*uint64{&p.VSizeBytes, &p.RSSBytes, &p.SharedBytes, &p.TextBytes, &p.DataBytes} {
		*v = r.uvarint()
	}
	if startStack {
		p.StartStack = r.uvarint()
	}
	for _, v := range [...]*uint64{&p.SwapBytes, &p.VoluntaryCtxSwitches, &p.InvoluntaryCtxSwitches,
		&p.IO.RChar, &p.IO.WChar, &p.IO.SyscR, &p.IO.SyscW, &p.IO.ReadBytes, &p.IO.WriteBytes, &p.IO.CancelledWriteBytes,
		&p.Smaps.RSSBytes, &p.Smaps.PSSBytes, &p.Smaps.USSBytes, &p.Smaps.SwapBytes, &p.Smaps.SwapPSSBytes} {
		*v = r.uvarint()
	}
	for _, v := range [...]*int{&p.RealUID, &p.EffectiveUID, &p.FDs, &p.OOMScore} {
		*v = r.int()
	}
	if args, ok := d.readCmdline(r); ok {
		p.Cmdline = args
	}
	p.Exe = d.str(r.bytes())
	p.Cwd = d.str(r.bytes())
	if n := r.uvarint(); n > 0 && n <= uint64(len(r.b)) {
		p.Cgroups = make([]procwalk.CgroupLine, n)
		for i := range p.Cgroups {
			c := &p.Cgroups[i]
			c.HierarchyID = r.int()
			c.Controllers = d.str(r.bytes())
			c.Path = d.str(r.bytes())
		}
	} else if n > 0 {
		r.fail()
	}
	rt := &p.Rates
	for _, v := range [...]*float64{&rt.IntervalSeconds, &rt.CPUPercent, &rt.ReadBytesPerSecond, &rt.WriteBytesPerSecond,
		&rt.RSSGrowthBytesPerMinute, &rt.PSSGrowthBytesPerMinute, &rt.USSGrowthBytesPerMinute} {
		*v = r.float()
	}
}

// float reads 8 little-endian bytes (encoding 1).
func (r *wireReader) float() float64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}
