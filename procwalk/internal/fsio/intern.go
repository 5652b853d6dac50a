//go:build linux

package fsio

// Interner returns one string for equal bytes, so that the names a scan
// repeats (comms, cgroup paths), within a scan and from scan to scan, share
// one allocation. Past Max strings it forgets them all: a host churning
// through unique names (pids in names, random tmp names) must not grow it
// without end. The zero value keeps the last string returned alone (Max
// 0: its map forgets at once); not safe for concurrent use.
type Interner struct {
	Max  int
	m    map[string]string
	last string // the last string returned: neighbouring processes often share a name
}

// MaxInterned is the Max the scanners use.
const MaxInterned = 8192

// String returns b as a string, the same one for the same bytes.
func (in *Interner) String(b []byte) string {
	if in.last == string(b) {
		return in.last
	}
	if s, ok := in.m[string(b)]; ok {
		in.last = s
		return s
	}
	if in.m == nil {
		in.m = make(map[string]string)
	} else if len(in.m) >= in.Max {
		clear(in.m)
	}
	s := string(b)
	in.m[s] = s
	in.last = s
	return s
}
