//go:build linux

package top

import (
	"cmp"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// stepSource serves frames gathered before, stepped through as a
// recording is (top --replay).
type stepSource struct {
	path   string // the recording's name in Position
	frames []Frame
	at     int
	steps  []int
}

func (s *stepSource) Gather(_ Need, shown func(Frame)) (Frame, error) {
	f := s.frames[s.at]
	if shown != nil {
		shown(f)
	}
	return f, nil
}

func (s *stepSource) Step(by int) {
	s.steps = append(s.steps, by)
	s.at = min(max(s.at+by, 0), len(s.frames)-1)
}

func (s *stepSource) Position() string {
	return fmt.Sprintf("%s frame %d of %d", cmp.Or(s.path, "rec"), s.at+1, len(s.frames))
}

// [ ] { } step through a Stepper's frames, the frame stepped to gathered
// at once, and the header says which; a live source says how to get one.
func TestStepThroughRecording(t *testing.T) {
	live := newFixtureSource(t)
	src := &stepSource{}
	for range 12 {
		f, err := live.Gather(Need{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		src.frames = append(src.frames, f)
	}
	m := New(Config{NoKill: "a replay"}, src, nil)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	m.Update(m.Init()())
	for _, c := range []struct {
		keys string
		at   int
	}{{"]", 2}, {"]]", 4}, {"[", 3}, {"}", 12}, {"]", 12}, {"{{", 1}, {"[", 1}} {
		press(m, c.keys)
		if !m.frame.Snapshot.Time.Equal(src.frames[c.at-1].Snapshot.Time) {
			t.Errorf("after %q: the frame of %v is shown, want frame %d's", c.keys, m.frame.Snapshot.Time, c.at)
		}
		if want := fmt.Sprintf("procwalk top  replay rec frame %d of 12", c.at); !strings.Contains(ansi.Strip(m.Screen()), want) {
			t.Errorf("after %q: no %q in\n%s", c.keys, want, m.Screen())
		}
	}
	press(m, "k")
	if !strings.Contains(m.Screen(), "a replay") {
		t.Errorf("k in a replay:\n%s", m.Screen())
	}
	if fmt.Sprint(src.steps) != "[1 1 1 -1 10 1 -10 -10 -1]" {
		t.Errorf("steps %v", src.steps)
	}
	// A recording's long path leaves room for which frame is shown: it
	// is cut at its start.
	src.path = "/tmp/TestIntegrationTopReplayInTmux1234567890/001/a-long-recording-name.pwrec"
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 30})
	if want := "replay …01/a-long-recording-name.pwrec frame 1 of 12  18 processes"; !strings.Contains(ansi.Strip(m.Screen()), want) {
		t.Errorf("a long path at 80 columns: no %q in\n%s", want, m.Screen())
	}
	lm, _, _ := newTestModel(t, 120, 30)
	press(lm, "]")
	if !strings.Contains(lm.Screen(), "[ and ] step through a recording: procwalk top --replay FILE") {
		t.Errorf("] on a live view:\n%s", lm.Screen())
	}
}
