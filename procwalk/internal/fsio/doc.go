// Package fsio holds the allocation-free helpers that procwalk's /proc
// parsers and the session package's cgroupfs and tmux readers share:
// decimal parsing and field splitting over byte slices (parse.go), the
// few syscalls of a scan loop taking reused NUL-terminated paths (sys.go),
// the one reader of getdents64 records (dirent.go), and the bounded string
// interner of comms and cgroup paths (intern.go).
// They are not API: procwalk's exported parsers are the API.
package fsio
