//go:build linux

package render

import (
	"bytes"
	"maps"
	"strings"
	"testing"
	"unicode/utf8"
)

// Long cells of one column that CutMiddle would print alike are cut where
// they differ; every other cell prints as CutMiddle cuts it.
func TestDistinctCuts(t *testing.T) {
	const pod = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod3f2a9c1e_5b7d_4e8f_a1b2_c3d4e5f6a7b8.slice/cri-containerd-"
	tests := []struct {
		name  string
		cells []string
		n     int
		want  map[string]string // the cells cut otherwise than by CutMiddle
	}{
		{
			name:  "fit or unique: as CutMiddle",
			cells: []string{"dev", "session-2.scope", "pod/6b1e0f8e-3a5c-4f1d-9a7b-2c3d4e5f6a7b", "pod/0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d", "dev"},
			n:     17,
		},
		{
			name: "one pod's containers: the tail widened",
			cells: []string{
				pod + "9e8d7c6b5a49e8d7c6b5a49e8d7c6b5a49e8d7c6b5a49e8d7c6b5a4aa11.scope",
				pod + "0123456789abcdef0123456789abcdef0123456789abcdef0123456bb11.scope",
			},
			n: 17,
			want: map[string]string{
				pod + "9e8d7c6b5a49e8d7c6b5a49e8d7c6b5a49e8d7c6b5a49e8d7c6b5a4aa11.scope": "/kubepo…a11.scope",
				pod + "0123456789abcdef0123456789abcdef0123456789abcdef0123456bb11.scope": "/kubepo…b11.scope",
			},
		},
		{
			name:  "alike at both ends: a window where they differ",
			cells: []string{"/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service", "/user.slice/user-1001.slice/user@1001.service/app.slice/foo.service"},
			n:     17,
			want: map[string]string{
				"/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service": "/us…-1000.sli…ice",
				"/user.slice/user-1001.slice/user@1001.service/app.slice/foo.service": "/us…-1001.sli…ice",
			},
		},
		{
			name:  "alike at the end: the head widened",
			cells: []string{"/srv/buildbox-alpha/cache/worker.scope", "/srv/buildbox-omega/cache/worker.scope"},
			n:     16,
			want: map[string]string{
				"/srv/buildbox-alpha/cache/worker.scope": "/srv/buildbox-a…",
				"/srv/buildbox-omega/cache/worker.scope": "/srv/buildbox-o…",
			},
		},
		{
			name:  "a cell that fits and reads like a cut",
			cells: []string{"abc…xyz", "abcdefghijklmnxyz"},
			n:     7,
			want:  map[string]string{"abcdefghijklmnxyz": "ab…nxyz"},
		},
		{
			name:  "three alike: parted in two steps",
			cells: []string{"/a/0000-1111-2222-3333-4444/x.scope", "/a/0000-1111-2222-3333-4444/y.scope", "/a/0000-9999-2222-3333-4444/x.scope"},
			n:     12,
			want: map[string]string{
				"/a/0000-1111-2222-3333-4444/y.scope": "/a/0…y.scope",
				"/a/0000-1111-2222-3333-4444/x.scope": "/a/0000-1…pe",
				"/a/0000-9999-2222-3333-4444/x.scope": "/a/0000-9…pe",
			},
		},
		{
			name:  "no cut tells them apart: CutMiddle's",
			cells: []string{strings.Repeat("a", 20), strings.Repeat("a", 21)},
			n:     9,
			want:  map[string]string{strings.Repeat("a", 20): "aaaa…aaaa", strings.Repeat("a", 21): "aaaa…aaaa"},
		},
	}
	for _, tt := range tests {
		got := distinctCuts(tt.cells, tt.n)
		if !maps.Equal(got, tt.want) {
			t.Errorf("%s: distinctCuts = %q, want %q", tt.name, got, tt.want)
		}
		// Whatever the layout: at most n runes, different cells print
		// differently (but for the last case).
		printed := map[string]string{}
		for _, c := range tt.cells {
			p, ok := got[c]
			if !ok {
				p = CutMiddle(c, tt.n)
			}
			if utf8.RuneCountInString(p) > tt.n {
				t.Errorf("%s: %q cut to %q, over %d runes", tt.name, c, p, tt.n)
			}
			if o, seen := printed[p]; seen && o != c && !strings.HasPrefix(tt.name, "no cut") {
				t.Errorf("%s: %q and %q both print %q", tt.name, o, c, p)
			}
			printed[p] = c
		}
	}
}

// A table keeps the cut names of a column apart and leaves the others, and
// whole names, as they were.
func TestTableCutsApart(t *testing.T) {
	tb := &Table{Cols: []Column{{Header: "NAME", Min: 12}, {Header: "RSS", Right: true}, {Header: "INFO", Min: 8}}}
	tb.Add("/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service", "1.0 MiB", "foo.service")
	tb.Add("/user.slice/user-1001.slice/user@1001.service/app.slice/foo.service", "1.0 MiB", "foo.service")
	tb.Add("/system.slice/nginx.service", "2.0 MiB", "nginx.service")
	tb.Add("init.scope", "3.0 MiB", "")
	var b bytes.Buffer
	if err := tb.Write(&b, 30); err != nil {
		t.Fatal(err)
	}
	want := `NAME              RSS  INFO
/u…000.sl…ce  1.0 MiB  foo.se…
/u…001.sl…ce  1.0 MiB  foo.se…
/syste…rvice  2.0 MiB  nginx.…
init.scope    3.0 MiB
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
