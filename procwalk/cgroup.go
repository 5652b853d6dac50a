//go:build linux

package procwalk

import (
	"bytes"
	"fmt"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// cgroup.go parses /proc/<pid>/cgroup: one "hierarchy-ID:controllers:path"
// line per hierarchy; cgroup v2 is the line "0::/path".

// CgroupLine is one line of /proc/<pid>/cgroup.
type CgroupLine struct {
	HierarchyID int
	Controllers string // comma-separated; empty for v2, "name=systemd" for named v1
	Path        string
}

// ParseCgroup parses /proc/<pid>/cgroup: one line per hierarchy, in the
// file's order.
func ParseCgroup(b []byte) ([]CgroupLine, error) {
	var out []CgroupLine
	for len(b) > 0 {
		var line []byte
		line, b = fsio.NextLine(b)
		if len(line) == 0 {
			continue
		}
		c1 := bytes.IndexByte(line, ':')
		if c1 < 0 {
			return nil, fmt.Errorf("%w: cgroup: line without ':'", ErrMalformed)
		}
		c2 := bytes.IndexByte(line[c1+1:], ':')
		if c2 < 0 {
			return nil, fmt.Errorf("%w: cgroup: line with one ':'", ErrMalformed)
		}
		c2 += c1 + 1
		id, ok := fsio.Atoi(line[:c1])
		if !ok {
			return nil, fmt.Errorf("%w: cgroup: bad hierarchy id", ErrMalformed)
		}
		out = append(out, CgroupLine{HierarchyID: int(id), Controllers: string(line[c1+1 : c2]), Path: string(line[c2+1:])})
	}
	return out, nil
}
