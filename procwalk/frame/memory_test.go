//go:build linux

package frame

import (
	"runtime/metrics"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
)

// TestReturnMemoryCollects checks when a daemon's memory return forces a
// garbage collection: after the first frame, then on a small host only
// once a megabyte was allocated since the last one, on a big host after
// every frame; and that it hands the frames' storage back.
func TestReturnMemoryCollects(t *testing.T) {
	p := New(fixtureFS(t), Config{Memory: Memory{Return: true}})
	forced := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	gather := func() Frame {
		f, err := p.Gather()
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	before := forced()
	f := gather()
	p.ReturnMemory(f) // the first: always
	if got := forced() - before; got != 1 {
		t.Fatalf("first ReturnMemory forced %d collections, want 1", got)
	}
	if e := recycled(f.Check); e == nil {
		t.Error("a frame is valid after ReturnMemory handed its storage back")
	}
	before = forced()
	p.ReturnMemory(gather()) // a fixture's gather allocates far less than 1 MiB
	if got := forced() - before; got != 0 {
		t.Errorf("ReturnMemory after a small gather forced %d collections, want 0", got)
	}
	allocated := 0
	for range 64 { // 2 MiB of garbage, on the heap: its size is not constant
		allocated += len(make([]byte, collectAfterBytes/32+p.memory.processes))
	}
	p.ReturnMemory(gather())
	if got := forced() - before; got != 1 {
		t.Errorf("ReturnMemory after allocating %d bytes forced %d collections, want 1", allocated, got)
	}
	before = forced()
	f = gather()
	f.Snapshot.Procs = make([]procwalk.Process, collectEveryFrameProcs) // as if the host were big
	p.ReturnMemory(f)
	if got := forced() - before; got != 1 {
		t.Errorf("ReturnMemory after a gather of %d processes forced %d collections, want 1", p.memory.processes, got)
	}

	// Without Memory.Return it does nothing.
	p.SetReturn(false)
	before = forced()
	f = gather()
	p.ReturnMemory(f)
	f.Check()
	if got := forced() - before; got != 0 {
		t.Errorf("ReturnMemory without Memory.Return forced %d collections", got)
	}
}
