//go:build linux

package fsio

import (
	"bytes"
)

// IsSpace reports whether c is a space, a tab or a line end.
func IsSpace(c byte) bool {
	return c <= ' ' && (c == ' ' || c == '\t' || c == '\n' || c == '\r') // digits and letters: one test
}

// SplitFields fills out with the space-separated fields of b and returns how
// many it found (at most len(out)).
func SplitFields(b []byte, out [][]byte) int {
	n := 0
	i := 0
	for n < len(out) {
		for i < len(b) && IsSpace(b[i]) {
			i++
		}
		if i == len(b) {
			break
		}
		j := i
		for j < len(b) && !IsSpace(b[j]) {
			j++
		}
		out[n] = b[i:j]
		n++
		i = j
	}
	return n
}

// Atou parses a decimal unsigned integer; false on empty input, a non-digit
// or overflow.
func Atou(b []byte) (uint64, bool) {
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

// Atoi parses a decimal integer with an optional leading '-'.
func Atoi(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	u, ok := Atou(b)
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

// NextLine returns the first line of b and the rest after its newline.
func NextLine(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}
