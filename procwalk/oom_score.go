//go:build linux

package procwalk

import (
	"fmt"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// oom_score.go parses /proc/<pid>/oom_score: one decimal number, the
// badness the OOM killer gives the process now (higher goes first; 0 for
// kernel threads and processes it may not kill).

func parseOOMScore(b []byte) (int, error) {
	v, ok := fsio.Atoi(trimSpace(b))
	if !ok || v < -1<<31 || v > 1<<31-1 {
		return 0, fmt.Errorf("%w: oom_score: %q is not a number", ErrMalformed, trimSpace(b))
	}
	return int(v), nil
}
