//go:build linux

package recording

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReader: a recording from anyone (a bug report) is read without a
// panic: every frame decodes or is an error, in order and at random.
func FuzzReader(f *testing.F) {
	b, _ := record(f, 4, Options{})
	f.Add(b)
	for _, at := range []int{60, len(b) / 3, len(b) / 2, len(b) - 30} {
		m := bytes.Clone(b)
		m[at] ^= 0x41
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewReader(bytes.NewReader(b), "fuzz.pwrec")
		if err != nil {
			return
		}
		for range 64 {
			if _, err := r.Next(); err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrFormat) && !errors.Is(err, ErrTruncated) {
					t.Fatalf("Next: %v", err)
				}
				break
			}
		}
		n, _ := r.Len()
		for _, i := range []int{n - 1, 0, n / 2} {
			r.Frame(i)
		}
	})
}

// TestDamagedBytes flips bytes of a recording of key frames and deltas
// (each of the first and last kilobytes, one in 29 between) and reads
// every frame, in order and at random: errors, never a panic or a hang.
func TestDamagedBytes(t *testing.T) {
	b, _ := record(t, 4, Options{})
	for at := 0; at < len(b); at++ {
		if at > 1024 && at < len(b)-1024 && at%29 != 0 {
			continue
		}
		m := bytes.Clone(b)
		m[at] ^= 0xa5
		r, err := NewReader(bytes.NewReader(m), "damaged.pwrec")
		if err != nil {
			continue
		}
		for range 8 {
			if _, err := r.Next(); err != nil {
				break
			}
		}
		if n, err := r.Len(); err == nil {
			for i := n - 1; i >= 0; i-- {
				r.Frame(i)
			}
		}
	}
}
