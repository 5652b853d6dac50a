//go:build linux

package render

import "testing"

// With PSS denied for part of a subtree its sum is a lower bound, marked +.
func TestTreePSSLowerBound(t *testing.T) {
	st := &subtree{}
	if got := treePSS(st); got != "-" {
		t.Errorf("empty subtree PSS = %q, want -", got)
	}
	st.pssMissing = 2
	if got := treePSS(st); got != "-" {
		t.Errorf("subtree whose every PSS was denied = %q, want -", got)
	}
	st.pssMissing = 0
	st.PSSBytes, st.SmapsRead = 3<<20, 2
	if got := treePSS(st); got != "3.0 MiB" {
		t.Errorf("complete subtree PSS = %q, want 3.0 MiB", got)
	}
	st.pssMissing = 1
	if got := treePSS(st); got != "3.0 MiB+" {
		t.Errorf("partial subtree PSS = %q, want 3.0 MiB+", got)
	}
}
