// Command rawloop is the baseline of procwalk's exec mode as a process of
// its own: list /proc, then open, read to EOF and close every pid's stat and
// statm, parsing nothing, once. TestCPUAgainstProcstat builds and runs it
// so that exec mode, a whole process per gather, is compared with a loop
// that also pays for starting a Go process. With the argument "status" it
// reads every status too: the floor of a command that shows what only
// status holds (sessions' SWAP, real uids).
package main

import (
	"os"
	"syscall"
)

func main() {
	dir, err := os.Open("/proc")
	if err != nil {
		os.Exit(1)
	}
	names, _ := dir.Readdirnames(-1)
	dir.Close()
	buf := make([]byte, 4096)
	files := []string{"/stat", "/statm"}
	if len(os.Args) > 1 && os.Args[1] == "status" {
		files = append(files, "/status")
	}
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		for _, f := range files {
			fd, err := syscall.Open("/proc/"+name+f, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			if err != nil {
				continue // exited
			}
			for {
				if n, err := syscall.Read(fd, buf); n <= 0 || err != nil {
					break
				}
			}
			syscall.Close(fd)
		}
	}
}
