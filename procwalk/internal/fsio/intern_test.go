//go:build linux

package fsio

import (
	"testing"
	"unsafe"
)

func TestInterner(t *testing.T) {
	in := Interner{Max: 2}
	a := in.String([]byte("bash"))
	if b := in.String([]byte("bash")); unsafe.StringData(a) != unsafe.StringData(b) {
		t.Error("equal bytes gave two strings")
	}
	in.String([]byte("sleep"))
	in.String([]byte("python3")) // past Max: forgets bash and sleep
	if c := in.String([]byte("bash")); c != "bash" || unsafe.StringData(a) == unsafe.StringData(c) {
		t.Errorf("after forgetting: %q, the old string %v", c, unsafe.StringData(a) == unsafe.StringData(c))
	}
	if len(in.m) > in.Max {
		t.Errorf("%d strings kept, Max %d", len(in.m), in.Max)
	}
}
