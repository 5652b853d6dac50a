package main

import (
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"syscall"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/procwalk/procwalk/cmd/procwalk/top"
	"github.com/procwalk/procwalk/procwalk"
)

// BenchmarkTopRefresh measures procwalk top's CPU per refresh of its
// default view (processes sorted by CPU %, 80×24), on this host's /proc,
// against procps top's in batch mode measured in the same run: top -b -n
// 11 less top -b -n 1, over 10 refreshes. Run it on a loaded host, e.g.
//
//	/work/shared/load/tmux-load start -s 100 -p 18 -m 1 -c 0 -L bench
//	go test ./cmd/procwalk -run '^$' -bench TopRefresh -benchtime 20x
//
// The target (issue 11): x-procps-top ≤ 1, and heap-mib at 10,000
// processes within 40 MiB of RSS.
func BenchmarkTopRefresh(b *testing.B) {
	fsys, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		b.Skip(err)
	}
	g := &globals{proc: procwalk.DefaultRoot, passwd: defaultPasswd, interval: time.Second, clock: procwalk.SystemClock{}}
	c := &topCommand{g: g, e: &env{}, kinds: overviewKinds()}
	c.f.danger = 80
	src, users, err := c.source(fsys)
	if err != nil {
		b.Fatal(err)
	}
	model := top.New(top.Config{Escape: printable, Users: users}, src, nil)
	model.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	model.Update(model.Init()()) // the first frame: no rates yet

	defer debug.SetGCPercent(debug.SetGCPercent(topGCPercent)) // as the command runs
	procsTop := procpsTopPerRefresh(b)
	b.ResetTimer()
	gc0 := gcCPU()
	cpu0 := processCPU()
	for range b.N {
		msg := model.Refresh()
		model.Update(msg)
		_ = model.View()
	}
	cpu := (processCPU() - cpu0) / time.Duration(b.N)
	b.StopTimer()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(cpu.Microseconds())/1000, "cpu-ms/refresh")
	b.ReportMetric((gcCPU()-gc0)*1000/float64(b.N), "gc-cpu-ms/refresh")
	b.ReportMetric(float64(procsTop.Microseconds())/1000, "procps-top-cpu-ms/refresh")
	b.ReportMetric(float64(cpu)/float64(procsTop), "x-procps-top")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-mib")
	b.ReportMetric(float64(model.Processes()), "procs")
}

// procpsTopPerRefresh is procps top's CPU per refresh in batch mode.
func procpsTopPerRefresh(b *testing.B) time.Duration {
	if _, err := exec.LookPath("top"); err != nil {
		b.Skip("no procps top to compare with")
	}
	run := func(n int) time.Duration {
		cmd := exec.Command("top", "-b", "-d", "0.2", "-n", strconv.Itoa(n))
		cmd.Env = []string{"COLUMNS=80", "LINES=24", "TERM=dumb"}
		if err := cmd.Run(); err != nil {
			b.Fatalf("top: %v", err)
		}
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	return (run(11) - run(1)) / 10
}

// processCPU is this process's CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func gcCPU() float64 {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64()
}
