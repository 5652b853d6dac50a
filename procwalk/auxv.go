//go:build linux

package procwalk

import "encoding/binary"

// auxv.go parses /proc/self/auxv: the auxiliary vector the kernel handed
// this process, pairs of native-endian 64-bit (tag, value) ended by tag 0
// (AT_NULL). AT_CLKTCK in it is USER_HZ, which cgo-free Go has no other
// way to ask for.

// atClkTck is the auxv tag of the clock tick rate (include/uapi/linux/auxvec.h).
const atClkTck = 17

// ParseAuxvClockTicks finds AT_CLKTCK in a native-endian 64-bit auxv vector.
func ParseAuxvClockTicks(b []byte) uint64 {
	for len(b) >= 16 {
		tag := binary.NativeEndian.Uint64(b)
		val := binary.NativeEndian.Uint64(b[8:])
		if tag == atClkTck {
			return val
		}
		if tag == 0 {
			break
		}
		b = b[16:]
	}
	return 0
}
