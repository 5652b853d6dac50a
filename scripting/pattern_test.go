//go:build linux

package scripting

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// The expected results were produced by the reference interpreter, Lua
// 5.1.5, with the serializer in patternHarness.
func TestPatternsMatchLua51(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"string.find(\"hello world\", \"o w\")", "5|7"},
		{"string.find(\"hello world\", \"o\", 6)", "8|8"},
		{"string.find(\"hello world\", \"l+\")", "3|4"},
		{"string.find(\"hello\", \"\")", "1|0"},
		{"string.find(\"hello\", \"\", 10)", "6|5"},
		{"string.find(\"hello\", \"xyz\")", "nil"},
		{"string.find(\"a.b\", \".\", 1, true)", "2|2"},
		{"string.find(\"hello world\", \"(o)(r)\")", "8|9|\"o\"|\"r\""},
		{"string.find(\"hello\", \"()ll()\")", "3|4|3|5"},
		{"string.find(\"hello\", \"^h\")", "1|1"},
		{"string.find(\"hello\", \"^e\")", "nil"},
		{"string.find(\"hello\", \"o$\")", "5|5"},
		{"string.find(\"hel$lo\", \"l$l\")", "3|5"},
		{"string.find(\"hello\", \"l\", -2)", "4|4"},
		{"string.match(\"key = value\", \"(%w+)%s*=%s*(%w+)\")", "\"key\"|\"value\""},
		{"string.match(\"2024-01-15\", \"(%d+)-(%d+)-(%d+)\")", "\"2024\"|\"01\"|\"15\""},
		{"string.match(\"  trim  \", \"^%s*(.-)%s*$\")", "\"trim\""},
		{"string.match(\"THE (quick) fox\", \"%((%a+)%)\")", "\"quick\""},
		{"string.match(\"f(a(b)c)d\", \"%b()\")", "\"(a(b)c)\""},
		{"string.match(\"THE (quick) fox\", \"%f[%a]%a+\", 5)", "\"quick\""},
		{"string.match(\"hello\", \".-\")", "\"\""},
		{"string.match(\"hello\", \".-$\")", "\"hello\""},
		{"string.match(\"aaa\", \"a-b\")", "nil"},
		{"string.match(\"aaab\", \"a-b\")", "\"aaab\""},
		{"string.match(\"abc\", \"[a-b]+\")", "\"ab\""},
		{"string.match(\"abc]\", \"[]]\")", "\"]\""},
		{"string.match(\"a-b\", \"[a%-]+\")", "\"a-\""},
		{"string.match(\"x^y\", \"[%^x]+\")", "\"x^\""},
		{"string.match(\"hello123\", \"[^%d]+\")", "\"hello\""},
		{"string.match(\"abab\", \"(ab)%1\")", "\"ab\""},
		{"string.match(\"hello\", \"(h)(e)(l)(l)(o)\")", "\"h\"|\"e\"|\"l\"|\"l\"|\"o\""},
		{"string.match(\"hello\", \"()\")", "1"},
		{"string.match(\"%d\", \"%%d\")", "\"%d\""},
		{"string.match(\"a.b\", \"%.\")", "\".\""},
		{"string.match(\"CamelCase\", \"%u%l+\", 2)", "\"Case\""},
		{"string.match(\"tab\\there\", \"%c\")", "\"\t\""},
		{"string.match(\"x1F\", \"%x+\")", "\"1F\""},
		{"string.match(\"a,b;c\", \"%p\")", "\",\""},
		{"string.match(\"abc\", \"b?c\")", "\"bc\""},
		{"string.match(\"ac\", \"ab?c\")", "\"ac\""},
		{"string.match(\"hello\", \"l*\")", "\"\""},
		{"string.match(\"\", \"a*\")", "\"\""},
		{"string.gsub(\"hello world\", \"o\", \"0\")", "\"hell0 w0rld\"|2"},
		{"string.gsub(\"hello world\", \"(%w+)\", \"<%1>\")", "\"<hello> <world>\"|2"},
		{"string.gsub(\"hello world\", \"%w+\", \"%0 %0\", 1)", "\"hello hello world\"|1"},
		{"string.gsub(\"abc\", \"\", \"-\")", "\"-a-b-c-\"|4"},
		{"string.gsub(\"abc\", \"%w*\", \"-\")", "\"--\"|2"},
		{"string.gsub(\"hello\", \"l\", {l=\"L\"})", "\"heLLo\"|2"},
		{"string.gsub(\"$name is $age\", \"%$(%w+)\", {name=\"bob\", age=42})", "\"bob is 42\"|2"},
		{"string.gsub(\"abc\", \"%w\", function(c) return c:upper() end)", "\"ABC\"|3"},
		{"string.gsub(\"abc\", \"%w\", function(c) return nil end)", "\"abc\"|3"},
		{"string.gsub(\"abc\", \"(%w)\", \"%1%1\")", "\"aabbcc\"|3"},
		{"string.gsub(\"abc\", \"^a\", \"X\")", "\"Xbc\"|1"},
		{"string.gsub(\"aaa\", \"^a\", \"X\")", "\"Xaa\"|1"},
		{"string.gsub(\"hello\", \"\", \"x\", 2)", "\"xhxello\"|2"},
		{"string.gsub(\"hello\", \"l\", \"%%\")", "\"he%%o\"|2"},
		{"string.gsub(\"hello\", \"l\", \"%x\")", "\"hexxo\"|2"},
		{"string.gsub(\"hello world\", \"()o\", \"%1\")", "\"hell5 w8rld\"|2"},
		{"string.gsub(\"abc\", \".\", {a=1, b=2})", "\"12c\"|3"},
		{"string.gsub(\"abc\", \"b\", 5)", "\"a5c\"|1"},
		{"string.gsub(\"x = 1, y = 2\", \"(%w+) = (%w+)\", \"%2 = %1\")", "\"1 = x, 2 = y\"|2"},
		{"string.gsub(\"abc\", \"b\", \"x\", 0)", "\"abc\"|0"},
		{"string.gsub(\"abc\", \"b\", \"x\", -1)", "\"abc\"|0"},
		{"(function() local t = {} for w in string.gmatch(\"one two three\", \"%a+\") do t[#t+1] = w end return table.concat(t, \",\") end)()", "\"one,two,three\""},
		{"(function() local t = {} for k, v in string.gmatch(\"a=1, b=2\", \"(%w+)=(%w+)\") do t[#t+1] = k .. v end return table.concat(t, \",\") end)()", "\"a1,b2\""},
		{"(function() local t = {} for w in string.gmatch(\"abc\", \"\") do t[#t+1] = \"[\" .. w .. \"]\" end return table.concat(t, \",\") end)()", "\"[],[],[],[]\""},
		{"(function() local t = {} for p in string.gmatch(\"abc\", \"()\") do t[#t+1] = p end return table.concat(t, \",\") end)()", "\"1,2,3,4\""},
		{"(function() local t = {} for w in string.gmatch(\"^a^b\", \"^%a\") do t[#t+1] = w end return table.concat(t, \",\") end)()", "\"^a,^b\""},
		{"select(\"#\", string.find(\"abc\", \"(x*)\"))", "3"},
		{"string.find(\"abc\", \"(x*)\")", "1|0|\"\""},
	}
	snap := loadSnapshot(t)
	for _, c := range cases {
		got, err := run(t, Config{}, "pattern.lua", patternHarness+"show("+c.expr+")", Input{Snapshot: snap})
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if got = strings.TrimSuffix(got, "\n"); got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.expr, got, c.want)
		}
	}
}

// patternHarness prints every value returned, strings in quotes, joined by |.
const patternHarness = `
local function show(...)
  local parts = {}
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if type(v) == "string" then v = '"' .. v .. '"' else v = tostring(v) end
    parts[#parts+1] = v
  end
  print(table.concat(parts, "|"))
end
`

func TestPatternErrors(t *testing.T) {
	cases := []struct{ expr, want string }{
		{`string.find("abc", "%")`, "malformed pattern (ends with '%')"},
		{`string.find("abc", "[a")`, "malformed pattern (missing ']')"},
		{`string.find("abc", "(a")`, "unfinished capture"},
		{`string.find("abc", "a)(")`, "invalid pattern capture"},
		{`string.find("abc", "%1")`, "invalid capture index"},
		{`string.gsub("abc", "(a)", "%2")`, "invalid capture index"},
		{`string.gsub("abc", "a", {a = true})`, "invalid replacement value (a boolean)"},
		{`string.gsub("abc", "a", true)`, "string/function/table expected"},
		{`string.find("abc", "%f")`, "missing '[' after '%f' in pattern"},
		{`string.find("abc", "%b")`, "unbalanced pattern"},
		{`string.find("abc", string.rep("(", 33) .. "a")`, "too many captures"},
		{`string.format("%100d", 1)`, "invalid format (width or precision too long)"},
		{`string.format("%5.100f", 1)`, "invalid format (width or precision too long)"},
	}
	snap := loadSnapshot(t)
	for _, c := range cases {
		_, err := run(t, Config{}, "bad.lua", "local x = "+c.expr, Input{Snapshot: snap})
		if !errors.Is(err, ErrScript) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad.lua:1:") {
			t.Errorf("%s: got %v, want an ErrScript at bad.lua:1 saying %q", c.expr, err, c.want)
		}
	}
}

// A pattern that backtracks for minutes (n³ steps: 31 s in gopher-lua's
// matcher for n = 1000) ends with the run's deadline.
func TestBacktrackingPatternStopsAtDeadline(t *testing.T) {
	snap := loadSnapshot(t)
	src := `local s = string.rep("a", 20000)
local x = string.find(s, "(.-)(.-)(.-)b")`
	s, err := Compile("backtrack.lua", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	r := New(Config{Limits: Limits{Timeout: 100 * time.Millisecond}})
	defer r.Close()
	// On a loaded machine the 100 ms may pass before line 2 begins: the
	// deadline then names line 1, and the matcher was not reached; another
	// run is taken (a few, then the test fails).
	for attempt := 1; ; attempt++ {
		start := time.Now()
		err = r.Run(context.Background(), s, Input{Snapshot: snap})
		if attempt < 5 && errors.Is(err, ErrTimeout) && strings.Contains(err.Error(), "backtrack.lua:1:") {
			t.Logf("attempt %d: the deadline passed before the matcher began: %v", attempt, err)
			continue
		}
		if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "backtrack.lua:2:") {
			t.Fatalf("got %v, want ErrTimeout at backtrack.lua:2", err)
		}
		// ErrTimeout says the deadline stopped it; the time is a hang guard
		// only (a matcher that ignored the deadline would run for hours),
		// since a loaded 2-core machine may take any time to get there.
		if d := time.Since(start); d > time.Minute {
			t.Errorf("the run took %v to stop, want about the 100ms deadline", d)
		}
		return
	}
}
