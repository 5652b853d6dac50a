//go:build linux

package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/procwalk/procwalk/procwalk/textwidth"
)

// procwalk man is made from the help: every command and each of its flags
// is in it, and groff formats it without a warning (-ww) when groff is
// installed (.ci/run installs groff-base).
func TestManPage(t *testing.T) {
	clearEnv(t)
	r := cli(t, "man")
	if r.code != exitOK || r.stderr != "" || !strings.HasPrefix(r.stdout, ".TH PROCWALK 1 ") {
		t.Fatalf("exit %d, stderr %q, start %q", r.code, r.stderr, r.stdout[:min(len(r.stdout), 40)])
	}
	for _, want := range []string{
		`.SS "procwalk ps [flags]"`, `.SS "procwalk top [flags]"`, `.SS "procwalk completion bash|zsh|fish"`,
		`.B "\-\-sort KEY"`, `.B "\-\-pss"`, ".SH EXIT STATUS", ".SH ENVIRONMENT", "EXAMPLES",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// The exit codes most commands share are on the page once, as EXIT
	// STATUS; guard, run and watch keep their own.
	if n := strings.Count(r.stdout, "0  success (partial data"); n != 1 {
		t.Errorf("the common exit codes are on the page %d times, want once", n)
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "'") || strings.HasPrefix(l, ".") && !isRequest(l) {
			t.Errorf("a text line troff would take as a request: %q", l)
		}
	}
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("no groff")
	}
	cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z")
	cmd.Stdin = strings.NewReader(r.stdout)
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("groff: %v\n%s", err, out)
	}
	// Formatted as man does for an 80-column terminal (a line of 78), no
	// line is wider: the tables and examples, kept as they are, ran to 87
	// cells, which the terminal broke mid-word.
	cmd = exec.Command(groff, "-man", "-Tutf8", "-rLL=78n", "-P-cbou")
	cmd.Stdin = strings.NewReader(r.stdout)
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("groff: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if w := textwidth.Width(l); w > 80 {
			t.Errorf("a line of %d cells at 80 columns: %q", w, l)
		}
	}
}

// isRequest reports whether a line of the page is one of the requests it
// writes.
func isRequest(l string) bool {
	for _, r := range []string{".TH ", ".SH ", ".SS ", ".PP", ".TP", ".B ", ".BR ", ".br", ".nf", ".fi", ".ad ", ".nh"} {
		if strings.HasPrefix(l, r) {
			return true
		}
	}
	return false
}
