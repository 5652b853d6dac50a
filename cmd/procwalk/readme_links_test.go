//go:build linux

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestREADMELinks follows every link of the repository's Markdown pages
// (README.md and the package READMEs it sends readers to): a link to a
// file names one that exists, and a link to a heading (#anchor, in the page
// or in another) names a heading that is there, as GitHub makes its
// anchors. Reference moves between pages, and renamed headings, break
// such links silently otherwise.
func TestREADMELinks(t *testing.T) {
	const repo = "../.."
	pages := map[string][]string{} // page -> lines outside code blocks
	err := filepath.WalkDir(repo, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "internal" || strings.HasPrefix(d.Name(), ".")) && path != repo {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			pages[filepath.Clean(path)] = proseLines(string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 3 {
		t.Fatalf("found %d Markdown pages under %s, want the README and the package READMEs", len(pages), repo)
	}
	anchors := map[string]map[string]bool{}
	for page, lines := range pages {
		anchors[page] = headingAnchors(lines)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	code := regexp.MustCompile("`[^`]*`")
	checked := 0
	for page, lines := range pages {
		for i, l := range lines {
			for _, m := range link.FindAllStringSubmatch(code.ReplaceAllString(l, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				dest := page
				if file != "" {
					dest = filepath.Clean(filepath.Join(filepath.Dir(page), file))
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link to %s: no such file", page, i+1, target)
						continue
					}
				}
				checked++
				if anchor == "" {
					continue
				}
				if a, ok := anchors[dest]; !ok || !a[anchor] {
					t.Errorf("%s:%d: link to %s: %s has no heading whose anchor is #%s", page, i+1, target, dest, anchor)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no link checked: the link pattern matches nothing")
	}
}

// proseLines returns a Markdown page's lines with those of fenced code
// blocks blanked (their line numbers kept): a `#` or `](` there is code.
func proseLines(doc string) []string {
	lines := strings.Split(doc, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			lines[i] = ""
			continue
		}
		if fenced {
			lines[i] = ""
		}
	}
	return lines
}

// headingAnchors returns the anchors GitHub gives a page's headings: the
// text in lower case, without punctuation but hyphens and underscores,
// spaces made hyphens, and a repeated anchor numbered (-1, -2 ...).
func headingAnchors(lines []string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range lines {
		text, ok := strings.CutPrefix(l, "#")
		if !ok {
			continue
		}
		text = strings.TrimLeft(text, "#")
		if !strings.HasPrefix(text, " ") {
			continue // "#hashtag" is no heading
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestREADMEBenchCommands runs nothing: it checks that each `go test ./PKG
// ... -bench NAME` a Markdown page gives names a package that has a
// benchmark NAME (or one whose name starts so), since a command that runs
// no benchmark prints only "PASS" and looks fine.
func TestREADMEBenchCommands(t *testing.T) {
	const repo = "../.."
	cmd := regexp.MustCompile("go test (\\./[^\\s`]*)[^`]*?-bench '?\\^?([A-Za-z0-9]+)")
	checked := 0
	err := filepath.WalkDir(repo, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") || strings.Contains(path, "/testdata/") || strings.Contains(path, "/internal/") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := strings.ReplaceAll(string(b), "\n", " ") // a command may wrap
		for _, m := range cmd.FindAllStringSubmatch(text, -1) {
			pkg, name := filepath.Join(repo, m[1]), m[2]
			tests, _ := filepath.Glob(filepath.Join(pkg, "*_test.go"))
			found := false
			for _, f := range tests {
				src, err := os.ReadFile(f)
				if err != nil {
					return err
				}
				if strings.Contains(string(src), "func Benchmark"+name) {
					found = true
					break
				}
			}
			checked++
			if !found {
				t.Errorf("%s: `go test %s ... -bench %s`: %s has no benchmark Benchmark%s", path, m[1], name, m[1], name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Error("no benchmark command found: the pattern matches nothing")
	}
}
