package procwalk

// meminfo.go parses /proc/meminfo: "Key:   value kB" lines. Only MemTotal
// is used, returned in bytes.

// parseMemTotal returns MemTotal in bytes, 0 when the line is missing or
// garbage.
func parseMemTotal(b []byte) uint64 {
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		if key, val, ok := keyValue(line); ok && string(key) == "MemTotal" {
			v, _ := kBToBytes(val)
			return v
		}
	}
	return 0
}
