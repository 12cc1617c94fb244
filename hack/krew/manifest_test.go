package main

import (
	"fmt"
	"strings"
	"testing"
)

// artifactsOf is dist/artifacts.json as goreleaser writes it for the six archives (and the
// binaries and checksum file it lists beside them).
func artifactsOf(version string) string {
	var entries []string
	for _, os := range []string{"linux", "darwin", "windows"} {
		for i, arch := range []string{"amd64", "arm64"} {
			ext := "tar.gz"
			if os == "windows" {
				ext = "zip"
			}
			name := fmt.Sprintf("kubectl-diagnose_%s_%s_%s.%s", version, os, arch, ext)
			sum := strings.Repeat(fmt.Sprintf("%x", len(os)+i), 64)[:64]
			entries = append(entries,
				fmt.Sprintf(`{"name":"kubectl-diagnose","path":"dist/kubectl-diagnose_%s_%s/kubectl-diagnose","goos":%q,"goarch":%q,"internal_type":4,"type":"Binary","extra":{"Binary":"kubectl-diagnose","ID":"kubectl-diagnose"}}`, os, arch, os, arch),
				fmt.Sprintf(`{"name":%q,"path":"dist/%s","goos":%q,"goarch":%q,"internal_type":1,"type":"Archive","extra":{"Binaries":["kubectl-diagnose"],"Checksum":"sha256:%s","Format":%q,"ID":"kubectl-diagnose","WrappedIn":""}}`, name, name, os, arch, sum, ext))
		}
	}
	entries = append(entries, `{"name":"checksums.txt","path":"dist/checksums.txt","internal_type":12,"type":"Checksum","extra":{}}`)
	return "[" + strings.Join(entries, ",") + "]"
}

func TestRenderFromGoreleaserArtifacts(t *testing.T) {
	out, err := render([]byte(artifactsOf("v0.2.0")), "v0.2.0", "https://example.invalid/releases/download/v0.2.0/")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m := string(out)
	for _, want := range []string{
		"apiVersion: krew.googlecontainertools.github.com/v1alpha2\n",
		"name: diagnose\n",
		"version: v0.2.0\n",
		"uri: https://example.invalid/releases/download/v0.2.0/kubectl-diagnose_v0.2.0_windows_arm64.zip\n",
		"bin: kubectl-diagnose.exe\n",
		"- from: kubectl_complete-diagnose\n",
		"- from: kubectl_complete-diagnose.cmd\n",
		"sha256: \"" + strings.Repeat("6", 64) + "\"\n", // linux arm64: len("linux")+1
	} {
		if !strings.Contains(m, want) {
			t.Errorf("manifest lacks %q:\n%s", want, m)
		}
	}
	if n := strings.Count(m, "selector:"); n != 6 {
		t.Errorf("%d platforms, want 6 (3 systems x 2 architectures):\n%s", n, m)
	}
	if err := validate(out); err != nil {
		t.Error(err)
	}
}

func TestRenderWithoutArchives(t *testing.T) {
	_, err := render([]byte(`[{"name":"checksums.txt","type":"Checksum","extra":{}}]`), "v0.2.0", "https://example.invalid")
	if err == nil || !strings.Contains(err.Error(), "no archives") {
		t.Errorf("err = %v, want no archives", err)
	}
}

func TestValidateRejects(t *testing.T) {
	good, err := render([]byte(artifactsOf("v0.2.0")), "v0.2.0", "https://example.invalid")
	if err != nil {
		t.Fatal(err)
	}
	sum := strings.Repeat("6", 64) // darwin amd64
	tests := []struct{ name, from, to, want string }{
		{"a short description of 50 characters", "shortDescription: Say why a workload serves nothing", "shortDescription: " + strings.Repeat("x", 50), "keep it under 50"},
		{"an unknown key", "homepage:", "homepageURL:", `unknown field "homepageURL"`},
		{"a checksum that is not sha256", "sha256: \"" + sum, "sha256: \"" + strings.Repeat("6", 63) + "F", "not 64 lower-case hex digits"},
		{"a bin that is not installed", "bin: kubectl-diagnose.exe", "bin: kubectl-diagnostic.exe", `bin "kubectl-diagnostic.exe" is not among the files installed`},
		{"a selector key krew does not know", "os: darwin", "kernel: darwin", `selector key "kernel" not supported`},
		{"a version without v", "version: v0.2.0", "version: 0.2.0", `version "0.2.0" is not a semantic version`},
		{"another kind", "kind: Plugin", "kind: Plugins", `kind "Plugins" is not Plugin`},
		{"a repeated platform", "arch: arm64\n        os: darwin", "arch: amd64\n        os: darwin", "repeats an earlier one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(string(good), tt.from) {
				t.Fatalf("the good manifest has no %q:\n%s", tt.from, good)
			}
			bad := strings.Replace(string(good), tt.from, tt.to, 1)
			if err := validate([]byte(bad)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("validate = %v, want an error with %q", err, tt.want)
			}
		})
	}
}
