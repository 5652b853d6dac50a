//go:build linux

package frame

import (
	"encoding/binary"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// oldFrames returns the frames of testdata/encodingN.frames: two gathers
// of the session fixture (../session/testdata/sessions), every field, on a
// clock stepping 10 s from 2027-01-15 08:00 UTC, written by the Encoder of
// encoding 1 (procwalk at d63d255) or 2 (speed's d8ccbc8, StartStack set
// to 0x7ffc00000000+pid before encoding: the fixture's stat files say 0),
// each uvarint-length prefixed.
func oldFrames(t *testing.T, name string) [][]byte {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			t.Fatalf("testdata/%s is cut", name)
		}
		out = append(out, b[k:k+int(n)])
		b = b[k+int(n):]
	}
	return out
}

// TestDecodeOldEncodings: frames of encodings 1 and 2, which recordings
// made before encoding 3 hold, decode with every kind of field. The values
// are the fixture's files' (proc/201: stat, statm, cmdline, cgroup,
// status).
func TestDecodeOldEncodings(t *testing.T) {
	for _, c := range []struct {
		file       string
		version    byte
		startStack uint64
	}{{"encoding1.frames", 1, 0}, {"encoding2.frames", 2, 0x7ffc_0000_0000 + 201}} {
		t.Run(c.file, func(t *testing.T) { decodeOld(t, oldFrames(t, c.file), c.version, c.startStack) })
	}
}

func decodeOld(t *testing.T, frames [][]byte, version byte, startStack uint64) {
	if len(frames) != 2 || frames[0][0] != version {
		t.Fatalf("%d frames, the first of version %d: want 2 of version %d", len(frames), frames[0][0], version)
	}
	dec := NewDecoder()
	for i, b := range frames {
		f, err := dec.Decode(b)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		s := f.Snapshot
		if want := time.Unix(1800000000+10*int64(i), 0); !s.Time.Equal(want) || f.Generation != uint64(i+1) || len(s.Procs) != 35 {
			t.Errorf("frame %d: time %v, generation %d, %d processes; want %v, %d, 35", i, s.Time, f.Generation, len(s.Procs), want, i+1)
		}
		p := s.Process(201)
		if p == nil {
			t.Fatalf("frame %d: no pid 201", i)
		}
		if p.Comm != "sshd" || p.PPID != 200 || p.PGRP != 201 || p.SID != 201 || p.State != 'S' || p.Threads != 1 ||
			p.UserCPUSeconds != 1 || p.SystemCPUSeconds != 0.5 || p.VSizeBytes != 12288000 || p.RSSBytes != 1000*4096 ||
			p.RealUID != 1000 || p.EffectiveUID != 1000 || p.StartStack != startStack {
			t.Errorf("frame %d: pid 201 %+v", i, *p)
		}
		if !slices.Equal(p.Cmdline, []string{"sshd: dev@pts/0"}) || p.Exe != "/usr/bin/sshd" || p.Cwd != "/" ||
			len(p.Cgroups) != 5 || p.Cgroups[4] != (procwalk.CgroupLine{HierarchyID: 0, Path: "/user.slice/user-1000.slice/session-5.scope"}) {
			t.Errorf("frame %d: pid 201 cmdline %q exe %q cwd %q cgroups %+v", i, p.Cmdline, p.Exe, p.Cwd, p.Cgroups)
		}
		if p.Rates.Measured != (i == 1) || (i == 1 && p.Rates.IntervalSeconds != 10) {
			t.Errorf("frame %d: rates %+v", i, p.Rates)
		}
		in := 0
		for _, ss := range f.Sessions {
			if slices.Contains(ss.Members, p.ID) {
				in++
			}
		}
		if len(f.Sessions) != 72 || in == 0 {
			t.Errorf("frame %d: %d sessions, pid 201 in %d of them: want 72, some", i, len(f.Sessions), in)
		}
	}
	// Cut anywhere (every cut in its first and last kilobyte, one in 61
	// between), an old frame is an error, never a panic.
	for n := range len(frames[0]) {
		if n > 1024 && n < len(frames[0])-1024 && n%61 != 0 {
			continue
		}
		if _, err := NewDecoder().Decode(frames[0][:n]); !errors.Is(err, ErrCodec) {
			t.Fatalf("the first %d of %d bytes: %v, want ErrCodec", n, len(frames[0]), err)
		}
	}
}
