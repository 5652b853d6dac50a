//go:build linux

package procwalk

// meminfo.go parses /proc/meminfo: "Key:   value kB" lines. Only MemTotal
// is used, returned in bytes.

// parseMemTotal returns MemTotal in bytes, 0 when the line is missing or
// garbage.
func parseMemTotal(b []byte) uint64 {
	var total uint64
	eachKeyValue(b, func(key, val []byte) {
		if total == 0 && string(key) == "MemTotal" {
			total, _ = kBToBytes(val)
		}
	})
	return total
}
