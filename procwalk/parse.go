//go:build linux

package procwalk

import (
	"bytes"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// parse.go holds allocation-free helpers shared by the /proc parsers. They
// replace strings.Fields and strconv on the hot path, where every process
// costs a few of each.

func trimSpace(b []byte) []byte {
	for len(b) > 0 && fsio.IsSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && fsio.IsSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// kBToBytes parses a /proc "kB" count (KiB) as bytes; false on a bad number
// or a count whose bytes overflow, which only garbage can hold.
func kBToBytes(b []byte) (uint64, bool) {
	kb, ok := fsio.Atou(b)
	if !ok || kb > (1<<64-1)>>10 {
		return 0, false
	}
	return kb << 10, true
}

// eachKeyValue calls fn with the key and value of every "Key: value" line
// of b (meminfo, status, io), skipping lines that are not.
func eachKeyValue(b []byte, fn func(key, val []byte)) {
	for len(b) > 0 {
		var line []byte
		line, b = fsio.NextLine(b)
		if key, val, ok := keyValue(line); ok {
			fn(key, val)
		}
	}
}

// keyValue splits a "Key:   value unit" line (status, smaps_rollup, io,
// meminfo) into key and the first word of the value.
func keyValue(line []byte) (key, val []byte, ok bool) {
	c := bytes.IndexByte(line, ':')
	if c <= 0 {
		return nil, nil, false
	}
	key = line[:c]
	v := line[c+1:]
	for len(v) > 0 && fsio.IsSpace(v[0]) {
		v = v[1:]
	}
	end := 0
	for end < len(v) && !fsio.IsSpace(v[end]) {
		end++
	}
	return key, v[:end], true
}
