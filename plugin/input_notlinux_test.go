//go:build !linux

package plugin

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// TestInputNotLinux: off Linux, Init and Gather fail with a message naming
// the system, and the sample configuration is still there for Telegraf's
// "config" command.
func TestInputNotLinux(t *testing.T) {
	var in Input
	for _, err := range []error{in.Init(), in.Gather(nil)} {
		if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "needs Linux") || !strings.Contains(err.Error(), runtime.GOOS) {
			t.Errorf("got %v, want errors.ErrUnsupported naming Linux and %s", err, runtime.GOOS)
		}
	}
	if !strings.Contains(in.SampleConfig(), "[[inputs.procwalk]]") {
		t.Errorf("SampleConfig lacks [[inputs.procwalk]]")
	}
}
