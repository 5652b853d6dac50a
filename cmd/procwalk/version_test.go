//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionText(t *testing.T) {
	vcs := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0de5e0a1b2c3d4e5f60718293a4b5c6d7e8f9012"}, {Key: "vcs.time", Value: "2026-11-28T08:00:00Z"}, {Key: "vcs.modified", Value: "false"},
	}}
	for _, tt := range []struct {
		name string
		s    stamp
		info *debug.BuildInfo
		want string
	}{
		{"stamped release", stamp{"v1.2.0", "abcdef0123456789", "2026-11-28T10:00:00Z"}, vcs,
			"procwalk 1.2.0 (commit abcdef012345, built 2026-11-28T10:00:00Z, go1.26.8 linux/amd64)"},
		{"go install @v1.2.0", stamp{}, &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0"}},
			"procwalk 1.2.0 (go1.26.8 linux/amd64)"},
		{"checkout", stamp{}, vcs, "procwalk (devel) (commit 0de5e0a1b2c3, built 2026-11-28T08:00:00Z, go1.26.8 linux/amd64)"},
		{"checkout, edited", stamp{}, &debug.BuildInfo{GoVersion: "go1.26.8", Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0de5e0a"}, {Key: "vcs.modified", Value: "true"}}},
			"procwalk (devel) (commit 0de5e0a+modified, go1.26.8 linux/amd64)"},
		{"-buildvcs=false", stamp{}, &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			"procwalk (devel) (no version stamp, go1.26.8 linux/amd64)"},
	} {
		if got := versionText(tt.s, tt.info, "linux/amd64"); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

// A build stamped with -ldflags -X says its version, commit and date,
// also under GOFLAGS=-buildvcs=false (some build machines set it), where
// Go records no revision.
func TestIntegrationVersionStamp(t *testing.T) {
	integration(t)
	bin := filepath.Join(t.TempDir(), "procwalk")
	build := exec.Command("go", "build", "-o", bin, "-ldflags",
		"-X main.version=v9.8.7 -X main.commit=feedfacecafe0123 -X main.date=2026-11-28T10:00:00Z", ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "procwalk 9.8.7 (commit feedfacecafe, built 2026-11-28T10:00:00Z, go1."; !strings.HasPrefix(string(out), want) {
		t.Errorf("--version: %q, want it to start %q", out, want)
	}
}
