package procwalk

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ReleaseSpare hands the pages of the array kept by Recycle back to the
// kernel, keeping the array itself: Recycle zeroed it, and the kernel maps
// a zeroed page again at the next touch, so the next scan fills the same
// array as before. A process that scans every few seconds and idles between
// (execd) then holds no resident memory for it between scans, without
// allocating an array per scan. It costs the next scan a page fault per
// page it fills (about 500 bytes a process).
func (sc *Scanner) ReleaseSpare() { ReleasePages(sc.spare) }

// ReleasePages hands the whole pages of the array under procs (its full
// capacity, which must be zeroed) back to the kernel: ReleaseSpare for
// another Source's recycled array.
func ReleasePages(procs []Process) {
	n := cap(procs)
	if n == 0 {
		return
	}
	// Whole pages inside the array only: its first and last page may hold
	// other data.
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(procs[:n]))), n*int(unsafe.Sizeof(Process{})))
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	skip := int((page - start%page) % page)
	if skip >= len(b) {
		return
	}
	b = b[skip:]
	b = b[:len(b)-len(b)%int(page)]
	if len(b) > 0 {
		unix.Madvise(b, unix.MADV_DONTNEED) // advice: nothing to do if refused
	}
}
