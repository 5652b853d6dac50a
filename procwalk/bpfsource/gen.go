package bpfsource

// The BPF program is compiled by clang through bpf2go into task_bpfel.o and
// task_bpfel.go, both committed: building procwalk never needs clang. After
// changing bpf/task.c or bpf/task.h, run `go generate ./procwalk/bpfsource`
// (clang and libbpf's headers, Debian's clang and libbpf-dev); .ci/run
// regenerates them when clang is present and fails if they differ.
//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror" -target bpfel task bpf/task.c
