//go:build linux

package plugin

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/session"
)

func userSessions(t *testing.T, cfg Config) *Collector {
	t.Helper()
	cfg.Group.Kinds = []string{session.KindUser}
	return fixtureCollector(t, cfg)
}

func TestSessionsFromFixture(t *testing.T) {
	ps := batch(t, userSessions(t, Config{Fields: procwalk.FieldSwap}))
	sessions := only(ps, MeasurementSession)
	if len(sessions) != 2 {
		t.Fatalf("%d sessions, want alice and root (kernel threads belong to none): %v", len(sessions), sessions)
	}
	alice := sessions[0]
	if want := map[string]string{"kind": "user", "session": "alice", "user": "alice"}; !reflect.DeepEqual(alice.tags, want) {
		t.Errorf("tags = %v, want %v", alice.tags, want)
	}
	page := int64(os.Getpagesize())
	want := map[string]any{
		"procs": int64(3), "threads": int64(5), "zombies": int64(1), "partial": false,
		"rss_bytes":  (1000 + 2000) * page,
		"swap_bytes": int64((64 + 128) << 10), // VmSwap of bash and evil
		// utime+stime of bash (50+25), evil (700+100) and the zombie (1+1) at 100 Hz
		"cpu_time_seconds":   8.77,
		"start_unix_seconds": int64(1700000010),
	}
	if !reflect.DeepEqual(alice.fields, want) {
		t.Errorf("fields =\n%v\nwant\n%v", alice.fields, want)
	}
	self := only(ps, MeasurementSelf)
	if len(self) != 1 || self[0].fields["processes"] != int64(5) || self[0].fields["sessions"] != int64(2) ||
		self[0].fields["lines"] != int64(2) || self[0].tags["schema"] != "procwalk" {
		t.Errorf("self metrics = %+v, want 5 processes, 2 sessions, 2 lines before it", self)
	}
	// The whole gather holds the scan.
	if g, s := self[0].fields["gather_seconds"].(float64), self[0].fields["scan_seconds"].(float64); !(g >= s) {
		t.Errorf("gather_seconds %v < scan_seconds %v: the whole gather holds the scan", g, s)
	}
}

func TestRatesAppearOnTheSecondGather(t *testing.T) {
	c := userSessions(t, Config{})
	first := only(batch(t, c), MeasurementSession)[0]
	if _, ok := first.fields["cpu_percent"]; ok {
		t.Error("cpu_percent on the first gather: there is no previous sample")
	}
	time.Sleep(time.Millisecond) // the Sampler needs time to pass
	second := only(batch(t, c), MeasurementSession)[0]
	if second.fields["cpu_percent"] != 0.0 || second.fields["rss_growth_bytes_per_minute"] != 0.0 {
		t.Errorf("second gather: cpu_percent=%#v growth=%#v, want measured zeros (the fixture does not change)",
			second.fields["cpu_percent"], second.fields["rss_growth_bytes_per_minute"])
	}
}

func TestProcessTop(t *testing.T) {
	tests := []struct {
		name  string
		cfg   ProcessConfig
		alice []int64 // pids in rank order
	}{
		{"top 2 by rss", ProcessConfig{Top: 2}, []int64{101, 100}},
		{"top 5 by cpu time", ProcessConfig{Top: 5, By: "cpu_time_seconds"}, []int64{101, 100, 102}},
		{"match on comm", ProcessConfig{Top: 5, Match: regexp.MustCompile(`^bash$`)}, []int64{100}},
		{"match on the command line", ProcessConfig{Top: 5, Match: regexp.MustCompile(`--name=a`)}, []int64{101}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := only(batch(t, userSessions(t, Config{Processes: tt.cfg})), MeasurementProcess)
			var got []int64
			for _, p := range ps {
				if p.tags["session"] != "alice" {
					continue
				}
				got = append(got, p.fields["pid"].(int64))
				// The command line is read for the top members alone,
				// after ranking, unless a match needed everyone's.
				if cmd, want := p.fields["cmdline"], map[int64]string{100: "-bash", 101: `./evil --name=a\nb \xff\xfe say "hi" \`, 102: ""}[got[len(got)-1]]; want != "" && cmd != want {
					t.Errorf("pid %d cmdline %q, want %q", got[len(got)-1], cmd, want)
				}
				if rank := fmt.Sprint(len(got)); p.tags["rank"] != rank {
					t.Errorf("pid %d has rank %s, want %s", got[len(got)-1], p.tags["rank"], rank)
				}
			}
			if !reflect.DeepEqual(got, tt.alice) {
				t.Errorf("alice's processes = %v, want %v", got, tt.alice)
			}
		})
	}
}

func TestHookAddsLinesBeforeSelfMetrics(t *testing.T) {
	hook := func(f frame.Frame, b *Batch) error {
		if err := b.Add("script_result", map[string]string{"rule": "r1"}, map[string]any{"sessions": len(f.Sessions)}); err != nil {
			return err
		}
		return errors.New("rule r2 failed")
	}
	c := userSessions(t, Config{Hook: hook})
	ps := batch(t, c)
	i := slices.IndexFunc(ps, func(p point) bool { return p.measurement == "script_result" })
	if i < 0 || ps[i].fields["sessions"] != int64(2) {
		t.Fatalf("hook line missing or wrong: %+v", ps)
	}
	self := ps[len(ps)-1]
	if self.measurement != MeasurementSelf || self.fields["errors"] != int64(1) || self.fields["lines"] != int64(3) {
		t.Errorf("last line = %+v, want self metrics counting the hook's line and its error", self)
	}
}

func TestWriteBatchWithoutProc(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/stat", []byte("cpu  1 0 0 0\nbtime 1700000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := procwalk.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCollector(fs, Config{Schema: SchemaProcstat})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(dir + "/stat") // the host facts can no longer be read: nothing to gather
	var out strings.Builder
	err = c.WriteBatch(&out, nil)
	if !errors.Is(err, ErrNothingGathered) {
		t.Fatalf("WriteBatch = %v, want ErrNothingGathered", err)
	}
	if out.Len() != 0 {
		t.Errorf("wrote %q after a failed gather", out.String())
	}
}

// Gather gathers without writing or calling the hook: a script worker runs
// the hook on it itself.
func TestGatherWithoutBatch(t *testing.T) {
	called := false
	c := userSessions(t, Config{Hook: func(frame.Frame, *Batch) error { called = true; return nil }})
	f, err := c.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if called || len(f.Snapshot.Procs) == 0 || len(f.Sessions) != 2 {
		t.Errorf("hook called %v, %d processes, %d sessions: want no call, the fixture's processes, 2 user sessions",
			called, len(f.Snapshot.Procs), len(f.Sessions))
	}
}
