package procwalk

import "bytes"

// parse.go holds allocation-free helpers shared by the /proc parsers. They
// replace strings.Fields and strconv on the hot path, where every process
// costs a few of each.

func isSpace(c byte) bool {
	return c <= ' ' && (c == ' ' || c == '\t' || c == '\n' || c == '\r') // digits and letters: one test
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// splitFields fills out with the space-separated fields of b and returns how
// many it found (at most len(out)).
func splitFields(b []byte, out [][]byte) int {
	n := 0
	i := 0
	for n < len(out) {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i == len(b) {
			break
		}
		j := i
		for j < len(b) && !isSpace(b[j]) {
			j++
		}
		out[n] = b[i:j]
		n++
		i = j
	}
	return n
}

// atou parses a decimal unsigned integer; false on empty input, a non-digit
// or overflow.
func atou(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// atoi parses a decimal integer with an optional leading '-'.
func atoi(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	u, ok := atou(b)
	switch {
	case !ok:
		return 0, false
	case neg && u <= 1<<63:
		return int64(-u), true // -u wraps to the two's complement; fine for 1<<63 too
	case !neg && u <= 1<<63-1:
		return int64(u), true
	}
	return 0, false
}

// kBToBytes parses a /proc "kB" count (KiB) as bytes; false on a bad number
// or a count whose bytes overflow, which only garbage can hold.
func kBToBytes(b []byte) (uint64, bool) {
	kb, ok := atou(b)
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
		line, b = nextLine(b)
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
	for len(v) > 0 && isSpace(v[0]) {
		v = v[1:]
	}
	end := 0
	for end < len(v) && !isSpace(v[end]) {
		end++
	}
	return key, v[:end], true
}

// nextLine returns the first line of b and the rest after its newline.
func nextLine(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}
