//go:build linux

package plugin

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
)

const fixtureProc = "testdata/proc"

// fixtureCollector returns a Collector over the fixture /proc tree.
func fixtureCollector(t *testing.T, cfg Config) *Collector {
	t.Helper()
	fs, err := procwalk.NewFS(fixtureProc)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Users == nil {
		if cfg.Users, err = procwalk.ReadUsers("testdata/passwd"); err != nil {
			t.Fatal(err)
		}
	}
	c, err := NewCollector(fs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func batch(t *testing.T, c *Collector) []point {
	t.Helper()
	var out bytes.Buffer
	if err := c.WriteBatch(&out, nil); err != nil {
		t.Fatal(err)
	}
	return decode(t, out.Bytes())
}

func byPID(ps []point, pid int64) *point {
	for i := range ps {
		if ps[i].fields["pid"] == pid || ps[i].tags["pid"] == strconv.FormatInt(pid, 10) {
			return &ps[i]
		}
	}
	return nil
}

func TestProcstatSchemaMatchesTelegrafNames(t *testing.T) {
	c := fixtureCollector(t, Config{Schema: SchemaProcstat})
	ps := batch(t, c)
	procs := only(ps, MeasurementProcstat)
	if len(procs) != 5 {
		t.Fatalf("%d procstat lines, want one per fixture process (5)", len(procs))
	}
	bash := byPID(procs, 100)
	if bash == nil {
		t.Fatal("no procstat line for pid 100")
	}
	if want := map[string]string{"pattern": ".", "process_name": "bash"}; !reflect.DeepEqual(bash.tags, want) {
		t.Errorf("tags = %v, want %v", bash.tags, want)
	}
	page := int64(os.Getpagesize())
	want := map[string]any{
		"pid": int64(100), "ppid": int64(1), "status": "sleep", "user": "alice", "cmdline": "-bash",
		"num_threads": int64(1), "num_fds": int64(4),
		"voluntary_context_switches": int64(1000), "involuntary_context_switches": int64(100),
		"read_count": int64(1000), "write_count": int64(500), "read_bytes": int64(100000), "write_bytes": int64(50000),
		"disk_read_bytes": int64(409600), "disk_write_bytes": int64(204800),
		"created_at":    int64(1700000010) * 1e9, // btime + 1000 ticks / 100 Hz, in ns
		"cpu_time_user": 0.5, "cpu_time_system": 0.25,
		"memory_rss": 1000 * page, "memory_vms": int64(9000000),
		"memory_usage": 100 * float64(1000*page) / float64(1048576*1024),
	}
	if !reflect.DeepEqual(bash.fields, want) {
		t.Errorf("fields =\n%v\nwant\n%v", bash.fields, want)
	}
	if _, ok := bash.fields["cpu_usage"]; ok {
		t.Error("cpu_usage on the first gather: procstat leaves it out until a second sample")
	}
	lookup := only(ps, MeasurementLookup)
	wantLookup := point{measurement: MeasurementLookup,
		tags:   map[string]string{"pattern": ".", "pid_finder": "native", "result": "success"},
		fields: map[string]any{"pid_count": int64(5), "running": int64(5), "result_code": int64(0)}}
	if len(lookup) != 1 || !reflect.DeepEqual(lookup[0].tags, wantLookup.tags) || !reflect.DeepEqual(lookup[0].fields, wantLookup.fields) {
		t.Errorf("procstat_lookup = %+v, want %+v", lookup, wantLookup)
	}

	// The second gather has a previous sample: cpu_usage appears.
	again := byPID(only(batch(t, c), MeasurementProcstat), 100)
	if got, ok := again.fields["cpu_usage"].(float64); !ok || got != 0 {
		t.Errorf("second gather cpu_usage = %#v, want 0.0 (the fixture's counters do not move)", again.fields["cpu_usage"])
	}
}

func TestProcstatLookups(t *testing.T) {
	tests := []struct {
		name     string
		cfg      ProcstatConfig
		wantTag  [2]string
		wantPIDs []int64
	}{
		{"pattern on the command line", ProcstatConfig{Pattern: regexp.MustCompile(`^/sbin/init`)}, [2]string{"pattern", "^/sbin/init"}, []int64{1}},
		{"pattern falls back to comm without a command line", ProcstatConfig{Pattern: regexp.MustCompile(`^kthr`)}, [2]string{"pattern", "^kthr"}, []int64{2}},
		{"exe on the process name", ProcstatConfig{Exe: regexp.MustCompile(`^(bash|sleep)$`)}, [2]string{"exe", "^(bash|sleep)$"}, []int64{100, 102}},
		{"user", ProcstatConfig{User: "root"}, [2]string{"user", "root"}, []int64{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := batch(t, fixtureCollector(t, Config{Schema: SchemaProcstat, Procstat: tt.cfg}))
			var pids []int64
			for _, p := range only(ps, MeasurementProcstat) {
				pids = append(pids, p.fields["pid"].(int64))
				if p.tags[tt.wantTag[0]] != tt.wantTag[1] {
					t.Errorf("pid %d tags %v, want %s=%s", p.fields["pid"], p.tags, tt.wantTag[0], tt.wantTag[1])
				}
				if _, clash := p.fields[tt.wantTag[0]]; clash {
					t.Errorf("pid %d has a %q field and tag", p.fields["pid"], tt.wantTag[0])
				}
			}
			if !reflect.DeepEqual(pids, tt.wantPIDs) {
				t.Errorf("pids %v, want %v", pids, tt.wantPIDs)
			}
			l := only(ps, MeasurementLookup)[0]
			if l.fields["pid_count"] != int64(len(tt.wantPIDs)) {
				t.Errorf("pid_count = %v, want %d", l.fields["pid_count"], len(tt.wantPIDs))
			}
		})
	}
}

func TestProcstatTagWith(t *testing.T) {
	c := fixtureCollector(t, Config{Schema: SchemaProcstat, Procstat: ProcstatConfig{TagWith: []string{"pid", "status", "user"}}})
	for _, p := range only(batch(t, c), MeasurementProcstat) {
		if p.tags["pid"] == "100" {
			if p.tags["status"] != "sleep" || p.tags["user"] != "alice" {
				t.Errorf("tags %v, want status=sleep user=alice", p.tags)
			}
			for _, f := range []string{"pid", "status", "user"} {
				if _, ok := p.fields[f]; ok {
					t.Errorf("%s is a tag and still a field", f)
				}
			}
			return
		}
	}
	t.Fatal("no line tagged pid=100")
}

func TestProcstatHostileComm(t *testing.T) {
	c := fixtureCollector(t, Config{Schema: SchemaProcstat})
	evil := byPID(only(batch(t, c), MeasurementProcstat), 101)
	if evil == nil {
		t.Fatal("the process with a hostile comm was dropped")
	}
	if got, want := evil.tags["process_name"], `evil\n) x=1,y "_`; got != want {
		t.Errorf("process_name = %q, want %q", got, want)
	}
	if got, want := evil.fields["cmdline"], `./evil --name=a\nb \xff\xfe say "hi" \`; got != want {
		t.Errorf("cmdline = %q, want %q", got, want)
	}
}

// SkipPID (procwalk telegraf's own pid) is never selected by a pattern,
// but stays a member whose size counts when nothing is matched.
func TestSkipPIDLeavesOutPatternMatchesOnly(t *testing.T) {
	pids := func(ps []point, measurement, session string) []int64 {
		var out []int64
		for _, p := range only(ps, measurement) {
			if session == "" || p.tags["session"] == session {
				out = append(out, p.fields["pid"].(int64))
			}
		}
		return out
	}
	bash := regexp.MustCompile(`bash`)
	tests := []struct {
		name string
		cfg  Config
		want []int64
	}{
		{"procstat pattern", Config{Schema: SchemaProcstat, Procstat: ProcstatConfig{Pattern: bash}}, []int64{100}},
		{"procstat pattern, 100 skipped", Config{Schema: SchemaProcstat, Procstat: ProcstatConfig{Pattern: bash}, SkipPID: 100}, nil},
		{"process_match", Config{Processes: ProcessConfig{Top: 5, Match: bash}}, []int64{100}},
		{"process_match, 100 skipped", Config{Processes: ProcessConfig{Top: 5, Match: bash}, SkipPID: 100}, nil},
		{"top without a match keeps 101", Config{Processes: ProcessConfig{Top: 2}, SkipPID: 101}, []int64{101, 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int64
			if tt.cfg.Schema == SchemaProcstat {
				got = pids(batch(t, fixtureCollector(t, tt.cfg)), MeasurementProcstat, "")
			} else {
				got = pids(batch(t, userSessions(t, tt.cfg)), MeasurementProcess, "alice")
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("pids %v, want %v", got, tt.want)
			}
		})
	}
}

// TestProcstatUserFollowsPasswd: a daemon's procstat user field names the
// user as the passwd file says at each gather (usermod renamed alice by
// writing a new file over the old), not as it said at start.
func TestProcstatUserFollowsPasswd(t *testing.T) {
	b, err := os.ReadFile("testdata/passwd")
	if err != nil {
		t.Fatal(err)
	}
	passwd := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(passwd, b, 0o644); err != nil {
		t.Fatal(err)
	}
	users, err := procwalk.ReadUsers(passwd)
	if err != nil {
		t.Fatal(err)
	}
	c := fixtureCollector(t, Config{Schema: SchemaProcstat, Users: users})
	user := func() any {
		t.Helper()
		p := byPID(only(batch(t, c), MeasurementProcstat), 100)
		if p == nil {
			t.Fatal("no procstat line of pid 100")
		}
		return p.fields["user"]
	}
	if got := user(); got != "alice" {
		t.Fatalf("first gather: user %v, want alice", got)
	}
	if err := os.WriteFile(passwd+"+", bytes.Replace(b, []byte("alice:"), []byte("alicia:"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(passwd+"+", passwd); err != nil {
		t.Fatal(err)
	}
	if got := user(); got != "alicia" {
		t.Errorf("after usermod: user %v, want alicia", got)
	}
}
