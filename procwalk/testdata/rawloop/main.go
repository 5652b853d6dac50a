// Command rawloop is the baseline of procwalk's exec mode as a process of
// its own: list /proc, then open, read to EOF and close every pid's stat and
// statm, parsing nothing, once. TestCPUAgainstProcstat builds and runs it
// so that exec mode, a whole process per gather, is compared with a loop
// that also pays for starting a Go process.
//
// Arguments add what a command's data needs beyond stat and statm, read
// the plainest way, to measure the floor of that command:
//
//	status  every status too (sessions' SWAP where swap is in use, real uids)
//	owner   the owner of every /proc/PID too (user sessions' effective uid)
//	kinds   what the default session kinds need: the command line of
//	        every interpreter (agent), cgroup.procs of every cgroup of
//	        each cgroup hierarchy that has a sub-cgroup (cgroup), and one
//	        "tmux list-panes -a" per tmux server socket of this user (tmux)
package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
)

func main() {
	status, owner, kinds := false, false, false
	for _, a := range os.Args[1:] {
		status = status || a == "status"
		owner = owner || a == "owner"
		kinds = kinds || a == "kinds"
	}
	dir, err := os.Open("/proc")
	if err != nil {
		os.Exit(1)
	}
	names, _ := dir.Readdirnames(-1)
	dir.Close()
	buf := make([]byte, 4096)
	files := []string{"/stat", "/statm"}
	if status {
		files = append(files, "/status")
	}
	var st syscall.Stat_t
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		if owner {
			syscall.Stat("/proc/"+name, &st)
		}
		for _, f := range files {
			n := readAll("/proc/"+name+f, buf)
			if kinds && f == "/stat" && interpreter(buf[:n]) {
				readAll("/proc/"+name+"/cmdline", buf)
			}
		}
	}
	if kinds {
		readCgroups(buf)
		askTmux()
	}
}

// readAll reads path to EOF into buf (again and again), returning the
// length of the first read.
func readAll(path string, buf []byte) int {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0 // exited
	}
	first := -1
	for {
		n, err := syscall.Read(fd, buf)
		if first < 0 {
			first = max(n, 0)
		}
		if n <= 0 || err != nil {
			break
		}
	}
	syscall.Close(fd)
	return first
}

// interpreter reports whether a stat line's comm is one whose script
// argument names an agent (node running Claude Code's CLI).
func interpreter(stat []byte) bool {
	open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return false
	}
	switch comm := string(stat[open+1 : end]); comm {
	case "node", "nodejs", "bun", "deno", "python", "python3", "ruby":
		return true
	default:
		return len(comm) > 8 && comm[:8] == "python3."
	}
}

// readCgroups reads cgroup.procs of every cgroup of each hierarchy mounted
// under /sys/fs/cgroup that has a sub-cgroup: the v2 one mounted there, or
// the v1 ones (and a hybrid host's v2 one) mounted in its directories.
func readCgroups(buf []byte) {
	tops := []string{"/sys/fs/cgroup/cgroup.procs"}
	if !exists(tops[0]) {
		tops, _ = filepath.Glob("/sys/fs/cgroup/*/cgroup.procs")
	}
	for _, top := range tops {
		root := filepath.Dir(top)
		var procs []string
		sub := false
		filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && path != root {
				sub = true
			}
			if d.Name() == "cgroup.procs" {
				procs = append(procs, path)
			}
			return nil
		})
		if !sub {
			continue
		}
		for _, p := range procs {
			readAll(p, buf)
		}
	}
}

// askTmux lists the panes of every tmux server with a socket in this
// user's socket directory; a socket no server listens on is passed over
// without starting tmux, as procwalk does.
func askTmux() {
	dir := filepath.Join(os.TempDir(), "tmux-"+strconv.Itoa(os.Getuid()))
	sockets, _ := os.ReadDir(dir)
	for _, s := range sockets {
		path := filepath.Join(dir, s.Name())
		if !listening(path) {
			continue
		}
		exec.Command("tmux", "-S", path, "list-panes", "-a", "-F", "#{pane_pid} #{session_name}").Run()
	}
}

// listening reports whether a server accepts connections on the unix
// socket at path (package net would link its resolver into the loop).
func listening(path string) bool {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer syscall.Close(fd)
	return syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}) == nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
