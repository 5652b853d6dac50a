//go:build linux

package procwalk

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// units.go parses and prints byte sizes for flags, config files and Lua
// (parse_bytes): "512MiB", "2G", "1.5GiB", "4096".

// ErrBadSize means a size string could not be parsed.
var ErrBadSize = errors.New("bad size")

// SizeError is ParseBytes's error, wrapping ErrBadSize: Value is no size
// because of Reason (an unknown unit, a size too large; "" when Value
// holds no number at all), and Hint says what a size looks like.
type SizeError struct {
	Value, Reason, Hint string
}

func (e *SizeError) Error() string {
	why := e.Reason
	if e.Hint != "" {
		why = strings.TrimPrefix(why+"; "+e.Hint, "; ")
	}
	return fmt.Sprintf("%v %q: %s", ErrBadSize, e.Value, why)
}

func (e *SizeError) Unwrap() error { return ErrBadSize }

// sizeUnit returns the multiplier of a lower-case suffix. The one-letter
// and IEC forms (K, M, G, T, KiB ...) are powers of 1024, as in systemd's
// MemoryMax=, docker -m and ulimit; the SI forms ending in B (KB, MB ...)
// are powers of 1000, as on disk labels.
func sizeUnit(unit string) (float64, bool) {
	switch unit {
	case "", "b":
		return 1, true
	case "k", "kib":
		return 1 << 10, true
	case "m", "mib":
		return 1 << 20, true
	case "g", "gib":
		return 1 << 30, true
	case "t", "tib":
		return 1 << 40, true
	case "p", "pib":
		return 1 << 50, true
	case "kb":
		return 1e3, true
	case "mb":
		return 1e6, true
	case "gb":
		return 1e9, true
	case "tb":
		return 1e12, true
	case "pb":
		return 1e15, true
	}
	return 0, false
}

// ParseBytes reads a size in bytes: a non-negative decimal number, optionally
// with a fraction, followed by an optional unit (case-insensitive, spaces
// allowed before it): B, K/KiB, M/MiB, G/GiB, T/TiB, P/PiB (powers of 1024)
// or KB, MB, GB, TB, PB (powers of 1000). A fractional result is rounded
// down to whole bytes.
func ParseBytes(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	end := 0
	for end < len(t) && (t[end] >= '0' && t[end] <= '9' || t[end] == '.') {
		end++
	}
	if end == 0 {
		return 0, &SizeError{Value: s, Hint: "want a number with an optional unit, e.g. 512MiB, 2G, 1.5GiB"}
	}
	num, err := strconv.ParseFloat(t[:end], 64)
	if err != nil {
		return 0, &SizeError{Value: s, Reason: strconv.Quote(t[:end]) + " is not a number"}
	}
	unit := strings.ToLower(strings.TrimSpace(t[end:]))
	mult, ok := sizeUnit(unit)
	if !ok {
		return 0, &SizeError{Value: s, Reason: "unknown unit " + strconv.Quote(t[end:]), Hint: "use B, K, KiB, KB, M, MiB, MB, G, GiB, GB, T, TiB, TB"}
	}
	v := math.Floor(num * mult)
	// float64 is exact to 2^53 bytes (8 PiB); above 2^63 the value no longer
	// fits the int64 that flags and Lua numbers use.
	if v >= 1<<63 {
		return 0, &SizeError{Value: s, Reason: "too large"}
	}
	return uint64(v), nil
}

// FormatBytes prints n with the largest binary unit that keeps it at least
// 1: "512 B", "1.5 KiB", "2.0 GiB".
func FormatBytes(n uint64) string {
	const units = "KMGTPE"
	var buf [32]byte // one allocation per call: the string returned
	if n < 1024 {
		return string(append(strconv.AppendUint(buf[:0], n, 10), " B"...))
	}
	v := float64(n)
	i := -1
	// Compare the value as printed (one decimal), so 1048575 bytes is
	// "1.0 MiB", not "1024.0 KiB".
	for math.Round(v*10)/10 >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return string(append(strconv.AppendFloat(buf[:0], v, 'f', 1, 64), ' ', units[i], 'i', 'B'))
}
