//go:build linux

package plugin

import (
	"errors"
	"testing"
	"time"
)

func TestAppendMetric(t *testing.T) {
	at := time.Unix(1700000000, 0)
	dst := []byte("first 1i\n")
	got, err := AppendMetric(dst, "rule", map[string]string{"session": "tmux build", "empty": ""}, map[string]any{"n": 2, "v": 1.5, "msg": "a\nb"}, at)
	if err != nil {
		t.Fatal(err)
	}
	want := "first 1i\nrule,session=tmux\\ build msg=\"a\\\\nb\",n=2i,v=1.5 1700000000000000000\n"
	if string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, c := range []struct {
		m      string
		fields map[string]any
	}{
		{"", map[string]any{"v": 1}},
		{"m", nil},
		{"m", map[string]any{"v": []int{1}}},
		{"bad\nname", map[string]any{"v": 1}},
	} {
		got, err := AppendMetric([]byte("keep\n"), c.m, nil, c.fields, at)
		if err == nil || string(got) != "keep\n" {
			t.Errorf("%q %v: got %q, %v; want the line refused and dst unchanged", c.m, c.fields, got, err)
		}
	}
	if _, err := AppendMetric(nil, "m", nil, map[string]any{"v": []int{1}}, at); !errors.Is(err, ErrEncode) {
		t.Errorf("a bad field type: %v, want ErrEncode", err)
	}
}
