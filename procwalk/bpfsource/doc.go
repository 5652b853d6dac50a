// Package bpfsource is a snapshot source for procwalk's Monitor that reads
// the kernel's task list through a BPF task iterator (iter/task, Linux 5.8+)
// instead of opening stat and statm of every process under /proc: one
// read(2) stream of a compact record per task, converted to the same
// procwalk.Process values the /proc Scanner gives.
//
// The BPF program (bpf/task.c) is compiled by clang through bpf2go; the
// object and its Go loader (task_bpfel.o, task_bpfel.go) are committed, and
// relocated at load time against the running kernel's BTF (CO-RE), so that
// neither building nor running procwalk needs clang.
//
// Choose picks the source at run time (--source proc|bpf|auto): the BPF
// source where the process may load it (root, or CAP_BPF and CAP_PERFMON),
// the kernel has BTF and iter/task, and the FS is the host's /proc; the
// /proc Scanner otherwise, and whenever loading fails, with a note saying
// why. Fields the iterator cannot give (cmdline, cwd, io, smaps_rollup ...)
// are read from /proc for the processes that need them.
package bpfsource
