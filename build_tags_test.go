package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestBuildsLeaveOutGoPlugins checks that the tags `make build` and the release build with keep
// the standard library's plugin package out of the executable: linked with cgo it makes the
// linker keep every exported method and symbol (Makefile, GO_TAGS). A new dependency that
// imports it another way, or a tag dropped from either file, fails here.
func TestBuildsLeaveOutGoPlugins(t *testing.T) {
	builds := []struct {
		file string
		tags *regexp.Regexp
	}{
		{"Makefile", regexp.MustCompile(`(?m)^GO_TAGS \?= (\S+)$`)},
		{".goreleaser.yaml", regexp.MustCompile(`-tags=([^\s,\]]+)`)},
	}
	for _, b := range builds {
		text, err := os.ReadFile(b.file)
		if err != nil {
			t.Fatal(err)
		}
		m := b.tags.FindSubmatch(text)
		if m == nil {
			t.Errorf("%s names no build tags (%s)", b.file, b.tags)
			continue
		}
		tags := string(m[1])
		out, err := exec.Command("go", "list", "-deps", "-tags="+tags,
			"-f", `{{.ImportPath}} {{join .Imports " "}}`, ".").Output()
		if err != nil {
			t.Fatalf("go list -tags=%s: %v", tags, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			pkg, imports, _ := strings.Cut(line, " ")
			if pkg != "plugin" && strings.Contains(" "+imports+" ", " plugin ") {
				t.Errorf("built as %s builds (-tags=%s), the executable links the plugin package: %s imports it", b.file, tags, pkg)
			}
		}
	}
}
