//go:build linux

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
// allocating an array per scan. The next scan maps the pages again in one
// call (populatePages) rather than a fault per page.
func (sc *Scanner) ReleaseSpare() {
	ReleasePages(sc.spare)
	sc.spareReleased = sc.spare != nil
}

// ReleasePages hands the whole pages of the array under procs (its full
// capacity, which must be zeroed) back to the kernel: ReleaseSpare for
// another Source's recycled array.
func ReleasePages(procs []Process) {
	if b := wholePages(procs); len(b) > 0 {
		unix.Madvise(b, unix.MADV_DONTNEED) // advice: nothing to do if refused
	}
}

// populatePages maps the whole pages of the array under procs (up to its
// capacity, zeroed) in one call, before a scan fills it: a page fault per
// page costs the kernel several times more (about 3.5 µs each on a 2-core
// VM, a tenth of a one-shot scan of 2,500 processes). Linux 5.14+; on
// older kernels the advice is refused and the pages fault in as before.
func populatePages(procs []Process) {
	if b := wholePages(procs); len(b) > 0 {
		unix.Madvise(b, unix.MADV_POPULATE_WRITE) // advice: nothing to do if refused
	}
}

// wholePages is the memory of the whole pages inside the array under
// procs, its full capacity: its first and last page may hold other data.
func wholePages(procs []Process) []byte {
	n := cap(procs)
	if n == 0 {
		return nil
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(procs[:n]))), n*int(unsafe.Sizeof(Process{})))
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	skip := int((page - start%page) % page)
	if skip >= len(b) {
		return nil
	}
	b = b[skip:]
	return b[:len(b)-len(b)%int(page)]
}
