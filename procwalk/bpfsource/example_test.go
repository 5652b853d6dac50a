//go:build linux

package bpfsource_test

import (
	"fmt"
	"log"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/bpfsource"
)

// Choose picks the source a Monitor reads through. On a fixture root (as
// here) auto reads /proc, and says why; on the host's /proc as root it
// loads the BPF iterator.
func Example() {
	fs, err := procwalk.NewFS("testdata/proc")
	if err != nil {
		log.Fatal(err)
	}
	chosen, err := bpfsource.Choose(fs, bpfsource.ModeAuto)
	if err != nil {
		log.Fatal(err) // an unknown mode
	}
	defer chosen.Close()
	m := procwalk.NewMonitor(fs, procwalk.MonitorConfig{Source: chosen.Source})
	snap, err := m.Gather()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s (%s): %d processes\n", snap.Source, snap.SourceNote, len(snap.Procs))
	for _, p := range snap.Procs {
		fmt.Printf("%d %q\n", p.ID.PID, p.Comm)
	}
	// Output:
	// proc (auto: bpf --proc is testdata/proc, not the host's /proc): 2 processes
	// 1 "systemd"
	// 7 "a) b\n(x"
}
