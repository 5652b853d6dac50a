//go:build linux

package session

import (
	"bytes"
	"os"

	"github.com/procwalk/procwalk/procwalk"
)

// agent_cmdline.go keeps the command lines the agent kind reads (those of
// interpreters and of 15-character comms, agentNeedsCmdline) from gather
// to gather, so that a long-running Grouper reads each once in the
// process's life rather than at every gather.
//
// Invalidation rule: the command line read of a process (pid and start
// time) is reused while its comm and the start of its stack (stat field
// 28, Process.StartStack) are what they were when it was read. An exec
// replaces both the program and the stack, and with address-space
// randomisation (on by default) the new stack starts at another address,
// even when the program and its comm are the same (exec python3 b.py from
// python3 a.py); a title a process sets (node's process.title, Python's
// setproctitle) renames its comm too. Not kept: a process whose stack
// start the kernel hides (0: another user's process when procwalk may not
// trace it), and every process on a host whose randomize_va_space is 0.
// Only the last gather's processes are kept.

// keptCmdline is one process's command line and what it was read under.
type keptCmdline struct {
	comm      string
	stack     uint64
	args      []string
	truncated bool
}

// fillCmdline gives p its kept command line when it still stands, and
// reports whether it did.
func (k *agentKind) fillCmdline(p *procwalk.Process) bool {
	c, ok := k.cmdlines[p.ID]
	if !ok || p.StartStack == 0 || c.stack != p.StartStack || c.comm != p.Comm {
		return false
	}
	p.Cmdline, p.CmdlineTruncated = c.args, c.truncated
	p.Read |= procwalk.FieldCmdline
	return true
}

// keepCmdlines keeps the command lines of s's processes that the agent
// kind reads, replacing those of the gather before.
func (k *agentKind) keepCmdlines(s *procwalk.Snapshot) {
	if !k.keepArgs {
		return
	}
	kept := make(map[procwalk.ProcID]keptCmdline, len(k.cmdlines))
	for i := range s.Procs {
		p := &s.Procs[i]
		if p.Read&procwalk.FieldCmdline == 0 || p.StartStack == 0 || !agentNeedsCmdline(p) {
			continue
		}
		kept[p.ID] = keptCmdline{comm: p.Comm, stack: p.StartStack, args: p.Cmdline, truncated: p.CmdlineTruncated}
	}
	k.cmdlines = kept
}

// addressesRandomised reports whether the kernel of fs randomises where
// a new program's stack starts (randomize_va_space 1 or 2).
func addressesRandomised(fs procwalk.FS) bool {
	b, err := os.ReadFile(fs.Path("sys", "kernel", "randomize_va_space"))
	if err != nil {
		return false
	}
	b = bytes.TrimSpace(b)
	return len(b) == 1 && (b[0] == '1' || b[0] == '2')
}
