//go:build linux

package main

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// The version stamp, set at link time by release builds:
//
//	go build -ldflags "-X main.version=1.2.0 -X main.commit=$(git rev-parse HEAD) \
//	    -X main.date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" ./cmd/procwalk
//
// (the names GoReleaser sets by default). These three are the only
// package-level variables of the command: the linker writes them, nothing
// changes them at run time. Without them --version falls back to what Go
// recorded in the binary (versionText).
var version, commit, date string

// stamp is what a build says of itself.
type stamp struct{ version, commit, date string }

// versionLine says which procwalk this is.
func versionLine() string {
	info, _ := debug.ReadBuildInfo()
	return versionText(stamp{version, commit, date}, info, runtime.GOOS+"/"+runtime.GOARCH)
}

// versionText is "procwalk VERSION (commit C, built DATE, GOVERSION OS/ARCH)":
// the link-time stamp first; else the module version `go install
// ...@VERSION` records, the VCS revision and time Go stamps in a build
// from a checkout (absent under GOFLAGS=-buildvcs=false), and "(devel)"
// with "no version stamp" when there is neither.
func versionText(s stamp, info *debug.BuildInfo, platform string) string {
	goVersion := runtime.Version()
	var rev, at string
	modified := false
	if info != nil {
		goVersion = info.GoVersion
		if s.version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			s.version = info.Main.Version
		}
		for _, kv := range info.Settings {
			switch kv.Key {
			case "vcs.revision":
				rev = kv.Value
			case "vcs.time":
				at = kv.Value
			case "vcs.modified":
				modified = kv.Value == "true"
			}
		}
	}
	if s.commit == "" {
		s.commit = rev
		if modified && rev != "" {
			s.commit += "+modified"
		}
	}
	if s.date == "" {
		s.date = at
	}
	v := strings.TrimPrefix(s.version, "v")
	if v == "" {
		v = "(devel)"
	}
	var parts []string
	if s.commit != "" {
		c := s.commit
		if len(c) > 12 && !strings.Contains(c, "+") {
			c = c[:12]
		}
		parts = append(parts, "commit "+c)
	}
	if s.date != "" {
		parts = append(parts, "built "+s.date)
	}
	if s.version == "" && s.commit == "" {
		parts = append(parts, "no version stamp")
	}
	parts = append(parts, goVersion+" "+platform)
	return "procwalk " + v + " (" + strings.Join(parts, ", ") + ")"
}
