//go:build linux

package scripting

import (
	"os"
	"strings"
	"testing"
)

// TestReferenceInREADME: the API reference in scripting/README.md is what
// procwalk run --api prints (UPDATE_GOLDEN=1 rewrites it).
func TestReferenceInREADME(t *testing.T) {
	const marker = "<!-- procwalk run --api -->\n```\n"
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, marker)
	if start < 0 {
		t.Fatalf("README.md has no %q", marker)
	}
	start += len(marker)
	end := strings.Index(doc[start:], "```\n")
	if end < 0 {
		t.Fatal("the API reference block is not closed")
	}
	got, want := doc[start:start+end], Reference()
	if got == want {
		return
	}
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile("README.md", []byte(doc[:start]+want+doc[start+end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's API reference differs from procwalk run --api; UPDATE_GOLDEN=1 go test ./scripting -run TestReferenceInREADME rewrites it.\nREADME:\n%s\n--api:\n%s", got, want)
}

// TestReferenceIsTheModule: every function and method the module offers
// is in the reference's table, and every one of the table is offered.
func TestReferenceIsTheModule(t *testing.T) {
	w := newWorld(t)
	prints, _ := ticks(t, w, `local pw = require "procwalk"
local names = {}
for k, v in pairs(pw) do if type(v) == "function" then names[#names + 1] = "pw." .. k end end
local p = pw.process(1)
for _, m in ipairs{"parent", "children", "descendants", "tree", "session", "kill"} do
  if type(p[m]) == "function" then names[#names + 1] = "p:" .. m end
end
local s = pw.sessions()[1]
for _, m in ipairs{"processes", "roots", "top", "tree", "kill"} do
  if type(s[m]) == "function" then names[#names + 1] = "s:" .. m end
end
table.sort(names)
print(table.concat(names, " "))`, 1)
	var want []string
	for _, f := range apiFuncs() {
		want = append(want, f.on+f.name)
	}
	got := strings.Fields(prints[0])
	if len(got) != len(want) {
		t.Errorf("the module offers %q\nthe table lists %q", got, want)
	}
	for _, w := range want {
		if !strings.Contains(" "+prints[0]+" ", " "+w+" ") {
			t.Errorf("%s is in the table but not in the module", w)
		}
	}
	ref := Reference()
	for _, f := range apiFuncs() {
		if !strings.Contains(ref, f.on+f.name) {
			t.Errorf("%s%s is not in the reference", f.on, f.name)
		}
	}
}
