//go:build linux

package procwalk

// meminfo.go parses /proc/meminfo: "Key:   value kB" lines, in bytes.
// Host uses MemTotal and whether swap is in use (System reads the rest).

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

// parseNoSwapInUse reports whether meminfo says no swap is in use:
// SwapTotal - SwapFree is 0 (no swap, or none of it used), so that every
// process's VmSwap is 0. False when either line is missing or garbage.
func parseNoSwapInUse(b []byte) bool {
	var total, free uint64
	var haveTotal, haveFree bool
	eachKeyValue(b, func(key, val []byte) {
		switch string(key) {
		case "SwapTotal":
			total, haveTotal = kBToBytes(val)
		case "SwapFree":
			free, haveFree = kBToBytes(val)
		}
	})
	return haveTotal && haveFree && total == free
}

// noSwapInUse reads meminfo: parseNoSwapInUse, false when unreadable.
func (fs FS) noSwapInUse() bool {
	b, err := readFile(fs.Path("meminfo"))
	return err == nil && parseNoSwapInUse(b)
}
