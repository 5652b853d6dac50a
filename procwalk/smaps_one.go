package procwalk

import "fmt"

// smaps_one.go reads smaps_rollup for chosen processes after a cheap scan:
// a supervisor watching one tree (procwalk guard) needs PSS for its own
// processes only, not a page-table walk of every process on the host.

// ReadSmaps reads /proc/<pid>/smaps_rollup for p, a process of a Snapshot of
// fs, and sets p.Smaps, p.SwapBytes and the FieldSmaps bit of p.Read (or of
// p.Denied when the kernel refuses). A process that exited, or whose pid now
// belongs to another process, is left unchanged with an error wrapping
// ErrGone. Kernel threads and zombies have no smaps: nil, nothing set.
func (fs FS) ReadSmaps(p *Process) error {
	if p.Kernel || p.Zombie() {
		return nil
	}
	b, err := readFile(fs.PIDPath(p.ID.PID, "smaps_rollup"))
	if err != nil {
		if IsDenied(err) {
			p.Denied |= FieldSmaps
		}
		return err
	}
	// The pid may have been reused since the scan: the start time after the
	// read says whose memory we read.
	st, err := fs.ReadStat(p.ID.PID)
	if err != nil {
		return err
	}
	if st.StartTicks != p.ID.StartTicks {
		return fmt.Errorf("pid %d was reused: %w", p.ID.PID, ErrGone)
	}
	if len(b) == 0 {
		return nil // exited (now a zombie) or has no memory map
	}
	sm, err := parseSmapsRollup(b)
	if err != nil {
		p.Malformed |= FieldSmaps
		return fmt.Errorf("pid %d: %w", p.ID.PID, err)
	}
	p.Smaps, p.SwapBytes = sm, sm.SwapBytes
	p.Read |= FieldSmaps
	return nil
}
